#version 450
#extension GL_EXT_integer_dot_product : require
// tangle benchmark "dot_gemv" (packed int8 dot products): y = A x for an int8 matrix A stored as
// `words` packed 4x8-bit words per row, accumulated with saturation (dotPacked4x8AccSatEXT).
// One invocation per row; push constants: rows, words per row.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) readonly buffer A { int a[]; };
layout(set = 0, binding = 1, std430) readonly buffer Xv { int x[]; };
layout(set = 0, binding = 2, std430) writeonly buffer Yv { int y[]; };
layout(push_constant) uniform P { uint rows; uint words; } p;
void main() {
  uint r = gl_GlobalInvocationID.x;
  if (r >= p.rows) return;
  int acc = 0;
  for (uint k = 0u; k < p.words; ++k) {
    acc = dotPacked4x8AccSatEXT(a[r * p.words + k], x[k], acc);
  }
  y[r] = acc;
}
