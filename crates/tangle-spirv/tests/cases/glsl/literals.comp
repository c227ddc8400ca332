// Friendly names and literal printing beyond the four extensions: 8/16/64-bit integers, half and
// double constants, negative switch cases, shared memory and barriers.
#version 450
#extension GL_EXT_shader_explicit_arithmetic_types : require

layout(local_size_x = 8, local_size_y = 2) in;

layout(set = 0, binding = 0) buffer Data {
    int64_t big[];
} data;
layout(set = 0, binding = 1) buffer Halves {
    float16_t h[16];
    double d[];
} halves;

shared int scratch[16];

void main() {
    uint i = gl_LocalInvocationIndex;
    scratch[i] = int(i) - 7;
    barrier();
    int v = scratch[15u - i];
    switch (v) {
    case -7:
        data.big[i] = -9000000000l;
        break;
    case 3:
        data.big[i] = int64_t(int8_t(-100)) + int64_t(int16_t(-30000));
        break;
    default:
        data.big[i] = int64_t(v) * 0x7fffffffffl;
        break;
    }
    halves.h[i] = float16_t(0.1) + float16_t(-65504.0) * float16_t(v);
    halves.d[i] = 0.1lf + 1.0e300lf * double(v) - 5.0e-324lf;
}
