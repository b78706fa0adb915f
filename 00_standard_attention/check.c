/* check.c: one head's S, P and O against the float64 reference, each stage on its own. */
#include <stdlib.h>

#include "ch00.h"
#include "host_tensor.h"

double std_attn_tolerance(const Options *o) { return o->dtype == DTYPE_FP16 ? SA_TOL_FP16 : SA_TOL_FP32; }

int std_attn_check_heads(const Options *o, int *idx) {
    const double per_head = 3.0 * o->N * (double)o->N * o->d, budget = 4294967296.0; /* 2^32 multiply-adds */
    int max = (int)(budget / per_head);
    if (max < 1) max = 1;
    if (max > 8) max = 8;
    return sample_heads(o->B * o->H, max, idx);
}

void std_attn_reference_head(const Options *o, const float *Q, const float *K, const float *V, int h, double *S_ref,
                             double *P_ref, double *O_ref) {
    const size_t at = (size_t)h * o->N * o->d;
    reference_scores_head(Q + at, K + at, o->N, o->d, 0, S_ref);
    reference_softmax_rows(S_ref, o->N, o->N, P_ref);
    reference_attention_head(Q + at, K + at, V + at, o->N, o->d, 0, O_ref, NULL);
}

void std_attn_compare_head(const Options *o, const float *S_h, const float *P_h, const float *O_h, const double *S_ref,
                           const double *P_ref, const double *O_ref, ErrorStats err[SA_KERNELS]) {
    const size_t N = o->N;
    error_stats_merge(&err[SA_QK], S_h, S_ref, N * N);
    error_stats_merge(&err[SA_SOFTMAX], P_h, P_ref, N * N);
    error_stats_merge(&err[SA_PV], O_h, O_ref, N * o->d);
}

void std_attn_check_head(const Options *o, const float *Q, const float *K, const float *V, int h, const float *S_h,
                         const float *P_h, const float *O_h, ErrorStats err[SA_KERNELS]) {
    const size_t N = o->N;
    double *S_ref = host_alloc(sizeof(double) * N * N, "the reference's S"),
           *P_ref = host_alloc(sizeof(double) * N * N, "the reference's P");
    double *O_ref = host_alloc(sizeof(double) * N * o->d, "the reference's O");
    std_attn_reference_head(o, Q, K, V, h, S_ref, P_ref, O_ref);
    std_attn_compare_head(o, S_h, P_h, O_h, S_ref, P_ref, O_ref, err);
    free(S_ref), free(P_ref), free(O_ref);
}

void std_attn_set_checks(const Options *o, const ErrorStats err[SA_KERNELS], KernelRun *runs) {
    for (int k = 0; k < SA_KERNELS; k++) {
        runs[k].have_check = 1;
        runs[k].err = err[k];
        runs[k].tol = std_attn_tolerance(o);
    }
}
