/* reference.h: attention in float64 on the CPU, and the error measures every check uses.
 *
 * Layout everywhere: [B, H, N, d] row-major, so head h of batch b starts at ((b*H + h) * N) * d.
 * softmax scale = 1/sqrt(d). With causal, query i attends keys 0..i. */
#ifndef FA_REFERENCE_H
#define FA_REFERENCE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One head: q, k, v are N x d. o (N x d) and lse (N; may be NULL) receive O and log-sum-exp per row,
 * lse_i = m_i + log(l_i) over the scaled scores. */
void reference_attention_head(const float *q, const float *k, const float *v, int N, int d, int causal,
                              double *o, double *lse);

/* Some rows of one head: o[x][0..d) and lse[x] (may be NULL) of query row rows[x], x < n; rows == NULL
 * means rows 0 .. n-1. reference_attention_head is this for every row. */
void reference_attention_rows(const float *q, const float *k, const float *v, int N, int d, int causal,
                              const int *rows, int n, double *o, double *lse);

/* One head's scores S = scale * Q K^T (N x N; masked entries -inf when causal). */
void reference_scores_head(const float *q, const float *k, int N, int d, int causal, double *s);

/* Row-wise safe softmax of a rows x cols matrix in float64 (max subtracted). A row that is entirely -inf
 * gives all zeros. */
void reference_softmax_rows(const double *s, long long rows, int cols, double *p);

typedef struct {
    double rel;       /* ||out - ref||_2 / ||ref||_2 (NaN when any output is not finite) */
    double max_abs;   /* max |out - ref|                                                 */
    size_t nonfinite; /* outputs that are NaN or inf (a poisoned, unwritten output)      */
    size_t n;         /* outputs compared */
    double sum_diff2, sum_ref2; /* running sums behind rel, so that checks can be merged */
} ErrorStats;

ErrorStats error_stats(const float *out, const double *ref, size_t n);
/* Accumulates another block of outputs into *acc (for checks done head by head). */
void error_stats_merge(ErrorStats *acc, const float *out, const double *ref, size_t n);
ErrorStats error_stats_empty(void);
double error_stats_rel(const ErrorStats *e);
/* Passes only when every output is finite and rel <= tol. NaN never passes. */
int error_ok(const ErrorStats *e, double tol);

/* Chooses up to `max` head indices out of `count` (first, last, evenly spaced between) for checks of large
 * problems; returns how many were written to idx. All heads when count <= max. */
int sample_heads(int count, int max, int *idx);

#ifdef __cplusplus
}
#endif
#endif
