/* cpu.c: chapter 06's CPU version: the kernel's arithmetic, row by row, in the storage precision (fa3_plain_row),
 * with the bytes counted where the kernel moves them; and the tolerance rule built on it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arith.h"
#include "ch06.h"
#include "host_tensor.h"
#include "progress.h"
#include "tiles.h"

#define LOG2E 1.4426950408889634f
#define LN2 0.6931471805599453f

float fa3_plain_row(const float *q, const float *K, const float *V, int N, int d, int Bc, int causal, int row,
                    DType t, float *o) {
    const float scale_log2 = LOG2E / sqrtf((float)d);
    const int keys = causal ? row + 1 : N;
    float m = -INFINITY, l = 0.f, s[FA3_BC_MAX];
    for (int x = 0; x < d; x++) o[x] = 0.f;
    for (int k0 = 0; k0 < keys; k0 += Bc) { /* one K/V block at a time, as the kernel */
        const int n = keys - k0 < Bc ? keys - k0 : Bc;
        float bmax = -INFINITY;
        for (int c = 0; c < n; c++) {
            float dot = 0.f;
            for (int x = 0; x < d; x++) dot += q[x] * K[(size_t)(k0 + c) * d + x];
            s[c] = dot * scale_log2;
            bmax = fmaxf(bmax, s[c]);
        }
        const float m_new = fmaxf(m, bmax), alpha = exp2f(m - m_new);
        l *= alpha;
        for (int x = 0; x < d; x++) o[x] *= alpha;
        for (int c = 0; c < n; c++) {
            const float p = exp2f(s[c] - m_new);
            l += p;
            const float p_t = stored_value(p, t); /* P enters the P V product in the storage type */
            for (int x = 0; x < d; x++) o[x] += p_t * V[(size_t)(k0 + c) * d + x];
        }
        m = m_new;
    }
    for (int x = 0; x < d; x++) o[x] = stored_value(o[x] / l, t);
    return (m + log2f(l)) * LN2;
}

void fa3_forward_cpu(const Options *o, AttnHost *t, IoBytes *io, double *ms) {
    const double t0 = wall_ms();
    const size_t heads = (size_t)o->B * o->H, e = dtype_size(o->dtype);
    const int N = o->N, d = o->d, Tr = (int)ceil_div(N, o->Br);
    Progress p;
    char what[64];
    snprintf(what, sizeof(what), "%s on the CPU", fa3_kernel_name(fa3_kernel_of(o)));
    progress_begin(&p, what);
    for (size_t h = 0; h < heads; h++) {
        const size_t at = h * N * d;
        for (int i = 0; i < Tr; i++) {
            const int q0 = i * o->Br, q_rows = N - q0 < o->Br ? N - q0 : o->Br;
            const long long visits = attn_kv_blocks(N, o->Br, o->Bc, o->causal, i);
            const long long keys = visits * o->Bc < N ? visits * o->Bc : N;
            io[0].read += e * (size_t)d * (q_rows + 2 * keys); /* Q_i; K_j and V_j of every visit */
            io[0].write += (e * d + sizeof(float)) * q_rows;   /* O_i, L_i */
            if (fa3_kernel_claims(fa3_kernel_runs(fa3_kernel_of(o), o->Br))) { /* steps 7-8: an item's claim */
                io[0].read += sizeof(int);
                io[0].write += sizeof(int);
            }
            for (int r = q0; r < q0 + q_rows; r++)
                t->L[h * N + r] = fa3_plain_row(t->Q + at + (size_t)r * d, t->K + at, t->V + at, N, d, o->Bc,
                                                o->causal, r, o->dtype, t->O + at + (size_t)r * d);
        }
        progress_update(&p, (double)(h + 1), (double)heads);
    }
    progress_end(&p);
    ms[0] = wall_ms() - t0;
}

/* Fixed bounds per type (the rule never allows more, whatever the plain error is), and the absolute term. */
#define TOL_BOUND_FP16 1e-2
#define TOL_BOUND_BF16 5e-2
#define TOL_ABS 1e-4

void fa3_tolerances(const Options *o, const AttnHost *t, const AttnExpected *e, double *tol_O, double *tol_L) {
    ErrorStats err_O = error_stats_empty(), err_L = error_stats_empty();
    float *row = host_alloc(sizeof(float) * o->d, "a plain row");
    for (int x = 0; x < e->nheads; x++)
        for (int y = 0; y < e->nrows; y++) {
            const size_t at = (size_t)e->heads[x] * o->N * o->d, want = (size_t)x * e->nrows + y;
            const float L = fa3_plain_row(t->Q + at + (size_t)e->rows[y] * o->d, t->K + at, t->V + at, o->N, o->d,
                                          o->Bc, o->causal, e->rows[y], o->dtype, row);
            error_stats_merge(&err_O, row, e->O + want * o->d, (size_t)o->d);
            error_stats_merge(&err_L, &L, e->L + want, 1);
        }
    free(row);
    const double bound = o->dtype == DTYPE_BF16 ? TOL_BOUND_BF16 : TOL_BOUND_FP16;
    *tol_O = fmin(bound, 2 * error_stats_rel(&err_O) + TOL_ABS);
    *tol_L = fmin(bound, 2 * error_stats_rel(&err_L) + TOL_ABS);
}
