/*
 * hb_elementwise.cl - add, mul, relu, gelu (tanh form), silu, sigmoid on contiguous tensors of n elements.
 * Work-item i handles elements [EWV*i, EWV*i + EWV) with one vector load/store per operand
 * (EWV = 16 in CPU style, where PoCL maps float16 onto AVX-512/AVX2 registers and the SLEEF vector
 * exp; 4 in GPU style, 16-byte accesses per lane); the last work-item takes the tail element-wise.
 * Global size: ceil(n/EWV) rounded up to the work-group size.
 */
#if HB_CPU_STYLE
#define EWV 16
#define FEW float16
#define LDE(i, p) LD16((i), (p))
#define STE(v, i, p) ST16((v), (i), (p))
#else
#define EWV 4
#define FEW float4
#define LDE(i, p) LD4((i), (p))
#define STE(v, i, p) ST4((v), (i), (p))
#endif

/* GELU, tanh form (Hendrycks & Gimpel 2016): 0.5 x (1 + tanh(t)), t = sqrt(2/pi) (x + 0.044715 x^3),
 * evaluated through the identity 1 + tanh(t) = 2 / (1 + exp(-2t)), i.e. x / (1 + exp(-2t)): the same
 * function without tanh's cancellation for large negative t, and one vector exp instead of tanh
 * (2-3x faster under PoCL). exp(-2t) overflowing to +inf gives -0, the limit. */
#define HB_GELU(x) ((x) / (1.0f + exp(-1.5957691216057308f * ((x) + 0.044715f * (x) * (x) * (x)))))
/* SiLU: x * sigmoid(x) = x / (1 + exp(-x)). */
#define HB_SILU(x) ((x) / (1.0f + exp(-(x))))
/* sigmoid: 1 / (1 + exp(-x)); exp(-x) overflowing to +inf gives 0, the limit. */
#define HB_SIGMOID(x) (1.0f / (1.0f + exp(-(x))))

#define HB_EW2(NAME, EXPR)                                                               \
__kernel void NAME(__global const TS *a, __global const TS *b, __global TS *y, ulong n)  \
{                                                                                        \
    size_t i = get_global_id(0);                                                         \
    if (EWV * i + EWV <= n) {                                                            \
        FEW x0 = LDE(i, a), x1 = LDE(i, b);                                              \
        STE(EXPR, i, y);                                                                 \
    } else {                                                                             \
        for (size_t j = EWV * i; j < n; j++) {                                           \
            float x0 = LD1(j, a), x1 = LD1(j, b);                                        \
            ST1(EXPR, j, y);                                                             \
        }                                                                                \
    }                                                                                    \
}
#define HB_EW1(NAME, EXPR)                                                               \
__kernel void NAME(__global const TS *a, __global TS *y, ulong n)                        \
{                                                                                        \
    size_t i = get_global_id(0);                                                         \
    if (EWV * i + EWV <= n) {                                                            \
        FEW x0 = LDE(i, a);                                                              \
        STE(EXPR, i, y);                                                                 \
    } else {                                                                             \
        for (size_t j = EWV * i; j < n; j++) {                                           \
            float x0 = LD1(j, a);                                                        \
            ST1(EXPR, j, y);                                                             \
        }                                                                                \
    }                                                                                    \
}

HB_EW2(hb_add, x0 + x1)
HB_EW2(hb_mul, x0 * x1)
HB_EW1(hb_relu, fmax(x0, 0.0f))
HB_EW1(hb_gelu, HB_GELU(x0))
HB_EW1(hb_silu, HB_SILU(x0))
HB_EW1(hb_sigmoid, HB_SIGMOID(x0))
