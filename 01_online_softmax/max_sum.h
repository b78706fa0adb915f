/* max_sum.h: the statistics of the online softmax, written once for the CPU (C) and the GPU (CUDA).
 *
 * For a set of scores x_1..x_n the pair (m, l) holds
 *     m = max_j x_j          l = sum_j exp(x_j - m)
 * and softmax(x)_j = exp(x_j - m) / l. Two such pairs over disjoint sets A and B combine into the pair over
 * A u B (the merge, exact in real arithmetic):
 *     m = max(m_A, m_B)      l = l_A * exp(m_A - m) + l_B * exp(m_B - m)
 * One of the two factors is exp(0) = 1, so a merge costs one exp: the smaller maximum's sum is rescaled.
 * A single score x is the pair (x, 1), so the online update "add x to (m, l)" is merge((m, l), (x, 1)).
 *
 * -inf (a masked score) is the identity's maximum: the empty set is (-inf, 0), and a set whose scores are
 * all -inf has l = 0 by definition (no probability mass), so that no -inf - (-inf) = NaN ever appears.
 * A row that is entirely -inf normalises to all zeros (see normaliser()). +inf and NaN inputs are not
 * supported: they give NaN, as in the float64 reference. */
#ifndef CH01_MAX_SUM_H
#define CH01_MAX_SUM_H

#include <math.h>

#ifdef __CUDACC__
#define MAX_SUM_FN static __host__ __device__ __forceinline__
#else
#define MAX_SUM_FN static inline
#endif

typedef struct {
    float m; /* running maximum                         */
    float l; /* sum of exp(x - m) over the same scores  */
} MaxSum;

MAX_SUM_FN MaxSum max_sum(float m, float l) {
    MaxSum s;
    s.m = m;
    s.l = l;
    return s;
}

/* The statistics of no score at all. */
MAX_SUM_FN MaxSum max_sum_empty(void) { return max_sum(-INFINITY, 0.f); }

/* The merge. Commutative bit for bit (the larger maximum keeps its sum, whichever argument it is);
 * associative up to rounding. */
MAX_SUM_FN MaxSum max_sum_merge(MaxSum a, MaxSum b) {
    /* ASSIGNMENT BEGIN merge [merge numerics]: what `make assignment CH=01` replaces with the stub below */
    /* ASSIGNMENT STUB merge
    // TODO: merge two pairs: m = max(a.m, b.m), and the sum of the smaller maximum rescaled by exp(its m - m);
    // all -inf gives l = 0. README: "The idea" (the merge) and "Numerics (what the tests hold)".
    return max_sum(fmaxf(a.m, b.m), a.l + b.l);
    */
    const MaxSum hi = a.m >= b.m ? a : b;
    const MaxSum lo = a.m >= b.m ? b : a;
    const float l = hi.m == -INFINITY ? 0.f : hi.l + lo.l * expf(lo.m - hi.m);
    return max_sum(hi.m, l);
    /* ASSIGNMENT END merge */
}

/* The online update: one more score. */
MAX_SUM_FN MaxSum max_sum_add(MaxSum s, float x) { return max_sum_merge(s, max_sum(x, 1.f)); }

/* softmax(x)_j = exp(x_j - m) * (1 / l). A row with l = 0 (every score -inf) gives 0, not 0/0. */
typedef struct {
    float m;     /* the maximum to subtract (0 for an all -inf row, so that exp(-inf - 0) = 0) */
    float inv_l; /* 1 / l, or 0 when l = 0                                                      */
} Normaliser;

MAX_SUM_FN Normaliser normaliser(MaxSum s) {
    Normaliser z;
    z.m = s.l > 0.f ? s.m : 0.f;
    z.inv_l = s.l > 0.f ? 1.f / s.l : 0.f;
    return z;
}

MAX_SUM_FN float normalise(Normaliser z, float x) { return expf(x - z.m) * z.inv_l; }

/* The first pass of the 3-pass softmax subtracts the row maximum before it knows the sum: the same guard. */
MAX_SUM_FN float shift_for_exp(float m) { return m == -INFINITY ? 0.f : m; }

#endif
