/* check.c: one head's outputs against the float64 reference. */
#include <math.h>
#include <stdlib.h>

#include "ch02.h"

void flash_v1_check_head(const Options *o, const float *Q, const float *K, const float *V, int h,
                         const float *O_h, const float *l_h, const float *m_h, ErrorStats *o_err,
                         ErrorStats *lse_err) {
    const int N = o->N, d = o->d;
    const size_t at = (size_t)h * N * d;
    double *ref = malloc(sizeof(double) * (size_t)N * d), *ref_lse = malloc(sizeof(double) * N);
    float *lse = malloc(sizeof(float) * N);
    reference_attention_head(Q + at, K + at, V + at, N, d, 0, ref, ref_lse);
    error_stats_merge(o_err, O_h, ref, (size_t)N * d);
    /* l and m are outputs too: a value the kernel never wrote is still NaN from the poisoning, and then its
     * log-sum-exp is not finite. The report's check counts those with O's non-finite outputs. */
    for (int r = 0; r < N; r++) lse[r] = m_h[r] + logf(l_h[r]);
    ErrorStats lse_stats = error_stats(lse, ref_lse, N);
    o_err->nonfinite += lse_stats.nonfinite;
    o_err->rel = error_stats_rel(o_err);
    if (lse_err) error_stats_merge(lse_err, lse, ref_lse, N);
    free(ref), free(ref_lse), free(lse);
}
