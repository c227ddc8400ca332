#version 450
// tangle benchmark "alu_hash" (ALU-bound): every invocation iterates a multiplicative integer hash
// `iters` times (push constant) and stores the result. No memory traffic inside the loop.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) buffer Out { uint v[]; } o;
layout(push_constant) uniform P { uint iters; } p;
void main() {
  uint i = gl_GlobalInvocationID.x;
  uint x = i * 2654435761u + 1u;
  for (uint k = 0u; k < p.iters; ++k) {
    x ^= x >> 13;
    x *= 0x5bd1e995u;
    x ^= x << 7;
    x += k;
  }
  o.v[i] = x;
}
