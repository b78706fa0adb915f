/* fma_loops.h: the inner loops of chapter 07's host versions (cpu.c, check.c): every product one fmaf (one
 * rounding, as the kernels' FMAs) and every sum in a fixed order. On x86-64 each function is compiled twice, with and
 * without the FMA instructions, and the first runs where the CPU has them (without them, fmaf is a call into the C
 * library for every element): the same results either way, several times faster. */
#ifndef FA_CH07_FMA_LOOPS_H
#define FA_CH07_FMA_LOOPS_H

#include <math.h>

#if defined(__x86_64__) && defined(__GNUC__)
#define FMA_CLONES __attribute__((target_clones("fma", "default")))
#else
#define FMA_CLONES
#endif

/* y += a x over n floats, element by element. */
FMA_CLONES static inline void fma_row(float *restrict y, float a, const float *restrict x, int n) {
    for (int i = 0; i < n; i++) y[i] = fmaf(a, x[i], y[i]);
}

/* *s = q . k and *dp = g . v over n floats, each sum in order (S_ij and dP_ij of one query and one key). */
FMA_CLONES static inline void fma_dots(const float *q, const float *k, const float *g, const float *v, int n,
                                       float *s, float *dp) {
    float a = 0.f, b = 0.f;
    for (int x = 0; x < n; x++) {
        a = fmaf(q[x], k[x], a);
        b = fmaf(g[x], v[x], b);
    }
    *s = a, *dp = b;
}

#endif
