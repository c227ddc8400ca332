// SPV_KHR_subgroup_rotate through GL_KHR_shader_subgroup_rotate: plain and clustered rotates of
// several types, with constant and dynamic deltas.
#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_rotate : require

layout(local_size_x = 32) in;

layout(set = 0, binding = 0) buffer Data {
    uint u[];
} data;
layout(set = 0, binding = 1) buffer Floats {
    vec4 f[];
} floats;

void main() {
    uint i = gl_GlobalInvocationID.x;
    uint delta = data.u[0] & 7u;
    data.u[i] = subgroupRotate(data.u[i], 3u) + subgroupRotate(i, delta);
    floats.f[i] = subgroupClusteredRotate(floats.f[i], delta, 8u);
    int s = subgroupClusteredRotate(int(i) - 5, 1u, 4u);
    if (s < -1) {
        data.u[i] ^= 0xffffffffu;
    }
}
