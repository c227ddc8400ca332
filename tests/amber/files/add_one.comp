#version 450
// Read by files.amber through SHADER ... FILE: adds 1 to every word.
layout(local_size_x = 4) in;
layout(set = 0, binding = 0) buffer W { uint w[]; };
void main() { w[gl_LocalInvocationIndex] += 1u; }
