#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_rotate : require
// tangle benchmark "rotate_conv" (subgroup-bound): a circular 16-tap convolution inside each
// cluster of 8 invocations; tap t comes from the invocation t places further round the cluster
// (subgroupClusteredRotate, the use case of the SPV_KHR_subgroup_rotate proposal).
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) readonly buffer X { float x[]; };
layout(set = 0, binding = 1, std430) readonly buffer W { float w[16]; };
layout(set = 0, binding = 2, std430) writeonly buffer Y { float y[]; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  float v = x[i];
  float acc = 0.0;
  for (uint t = 0u; t < 16u; ++t) {
    acc += w[t] * subgroupClusteredRotate(v, t, 8u);
  }
  y[i] = acc;
}
