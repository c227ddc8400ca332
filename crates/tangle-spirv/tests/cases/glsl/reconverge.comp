// SPV_KHR_maximal_reconvergence through GL_EXT_maximal_reconvergence, with divergent control
// flow (a loop, a switch) around subgroup operations.
#version 450
#extension GL_EXT_maximal_reconvergence : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_arithmetic : require

layout(local_size_x = 16) in;

layout(set = 0, binding = 0) buffer Data {
    uint v[];
} data;

void main() [[maximally_reconverges]] {
    uint i = gl_LocalInvocationIndex;
    uint acc = 0u;
    for (uint k = 0u; k < (i & 3u); ++k) {
        acc += subgroupAdd(k);
    }
    switch (i % 3u) {
    case 0u:
        acc += subgroupBallotBitCount(subgroupBallot(true));
        break;
    case 1u:
        acc *= 3u;
        break;
    default:
        acc = subgroupMax(acc);
        break;
    }
    data.v[i] = acc + (subgroupElect() ? 1u : 0u);
}
