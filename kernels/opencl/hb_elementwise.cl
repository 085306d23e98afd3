/*
 * hb_elementwise.cl - add, mul, relu, gelu (tanh form), silu on contiguous tensors of n elements.
 * Work-item i handles elements [4i, 4i+4) (vector load/store), the last one checks the tail.
 * Global size: ceil(n/4) rounded up to the work-group size.
 */
inline float4 hb_gelu4(float4 x)
{
    /* tanh form (Hendrycks & Gimpel 2016): 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
    const float k0 = 0.7978845608028654f, k1 = 0.044715f;
    return 0.5f * x * (1.0f + tanh(k0 * (x + k1 * x * x * x)));
}
inline float4 hb_silu4(float4 x) { return x / (1.0f + exp(-x)); }

#define HB_EW2(NAME, EXPR)                                                               \
__kernel void NAME(__global const TS *a, __global const TS *b, __global TS *y, ulong n)  \
{                                                                                        \
    size_t i = get_global_id(0);                                                         \
    if (4 * i + 4 <= n) {                                                                \
        float4 x0 = LD4(i, a), x1 = LD4(i, b);                                           \
        ST4(EXPR, i, y);                                                                 \
    } else {                                                                             \
        for (size_t j = 4 * i; j < n; j++) {                                             \
            float4 x0 = (float4)(LD1(j, a)), x1 = (float4)(LD1(j, b));                   \
            float4 r = EXPR;                                                             \
            ST1(r.x, j, y);                                                              \
        }                                                                                \
    }                                                                                    \
}
#define HB_EW1(NAME, EXPR)                                                               \
__kernel void NAME(__global const TS *a, __global TS *y, ulong n)                        \
{                                                                                        \
    size_t i = get_global_id(0);                                                         \
    if (4 * i + 4 <= n) {                                                                \
        float4 x0 = LD4(i, a);                                                           \
        ST4(EXPR, i, y);                                                                 \
    } else {                                                                             \
        for (size_t j = 4 * i; j < n; j++) {                                             \
            float4 x0 = (float4)(LD1(j, a));                                             \
            float4 r = EXPR;                                                             \
            ST1(r.x, j, y);                                                              \
        }                                                                                \
    }                                                                                    \
}

HB_EW2(hb_add, x0 + x1)
HB_EW2(hb_mul, x0 * x1)
HB_EW1(hb_relu, fmax(x0, 0.0f))
HB_EW1(hb_gelu, hb_gelu4(x0))
HB_EW1(hb_silu, hb_silu4(x0))
