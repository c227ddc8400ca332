#version 450
// tangle benchmark "saxpy" (memory-bound): y = a * x + y over n floats; the last workgroup may be
// partial, so the bound is checked.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0, std430) readonly buffer X { float x[]; };
layout(set = 0, binding = 1, std430) buffer Y { float y[]; };
layout(push_constant) uniform P { float a; uint n; } p;
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < p.n) y[i] = p.a * x[i] + y[i];
}
