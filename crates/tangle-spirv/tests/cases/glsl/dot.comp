// SPV_KHR_integer_dot_product through GL_EXT_integer_dot_product: packed 4x8 and vector forms,
// signed, unsigned, mixed, with accumulation and saturation.
#version 450
#extension GL_EXT_integer_dot_product : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require

layout(local_size_x = 64) in;

layout(set = 0, binding = 0) buffer Data {
    uint a[];
} data;
layout(set = 0, binding = 1) buffer Out {
    int s[];
} result;

void main() {
    uint i = gl_GlobalInvocationID.x;
    uint x = data.a[2 * i];
    uint y = data.a[2 * i + 1];
    result.s[4 * i] = dotPacked4x8EXT(int(x), int(y));
    result.s[4 * i + 1] = int(dotPacked4x8EXT(x, y));
    result.s[4 * i + 2] = dotPacked4x8AccSatEXT(int(x), int(y), -2147483600);
    result.s[4 * i + 3] = dotPacked4x8AccSatEXT(int(x), y, 7) + dotPacked4x8EXT(x, int(y));
    data.a[i] = dotPacked4x8AccSatEXT(x, y, 4000000000u);
    i8vec4 va = unpack8(int(x));
    u8vec4 vb = unpack8(y);
    result.s[i] += int(dotEXT(vb, vb)) + dotEXT(va, i8vec4(-1, 2, -3, 4)) + dotAccSatEXT(va, vb, -9);
}
