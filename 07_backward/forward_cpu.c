/* forward_cpu.c: the forward that feeds chapter 07's backward, on the CPU: chapter 03's loop nest (03_flash_v2/
 * cpu.c), copied, at the forward's own tiles FWD_BR x FWD_BC (forward_tiles.h). Bytes are counted where chapter
 * 03's kernel loads and stores; the arithmetic is its: scores in log2 units, exp2, one division per row. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ch07.h"
#include "forward_tiles.h"
#include "host_tensor.h"

#define LN2 0.6931471805599453f

static void fwd_head_cpu(const float *Q, const float *K, const float *V, float *O, float *L, int N, int d, int Br,
                         int Bc, int causal, IoBytes *io) {
    const float scale_log2 = LOG2E / sqrtf((float)d);
    float *Q_i = host_alloc(sizeof(float) * Br * d, "Q_i"), *O_i = host_alloc(sizeof(float) * Br * d, "O_i");
    float *K_j = host_alloc(sizeof(float) * Bc * d, "K_j"), *V_j = host_alloc(sizeof(float) * Bc * d, "V_j");
    float *m = host_alloc(sizeof(float) * Br, "m"), *l = host_alloc(sizeof(float) * Br, "l");
    float *s = host_alloc(sizeof(float) * Bc, "S_ij");
    const int Tr = (int)ceil_div(N, Br), Tc = (int)ceil_div(N, Bc);

    for (int i = 0; i < Tr; i++) {
        const int q0 = i * Br, q_rows = N - q0 < Br ? N - q0 : Br;
        counted_copy(Q_i, Q + (size_t)q0 * d, (size_t)q_rows * d, &io->read); /* once per query block */
        for (int r = 0; r < q_rows; r++) m[r] = -INFINITY, l[r] = 0.f;
        memset(O_i, 0, sizeof(float) * Br * d);
        /* With the causal mask, stop at the first K/V block that starts after Q_i's last real row. */
        for (int j = 0; j < Tc && (!causal || j * Bc <= q0 + q_rows - 1); j++) {
            const int k0 = j * Bc, kv_rows = N - k0 < Bc ? N - k0 : Bc;
            counted_copy(K_j, K + (size_t)k0 * d, (size_t)kv_rows * d, &io->read);
            counted_copy(V_j, V + (size_t)k0 * d, (size_t)kv_rows * d, &io->read);
            for (int r = 0; r < q_rows; r++) {
                const int query = q0 + r;
                float block_max = -INFINITY;
                for (int c = 0; c < kv_rows; c++) { /* S_ij, one row at a time, in log2 units */
                    float dot = 0.f;
                    for (int x = 0; x < d; x++) dot += Q_i[r * d + x] * K_j[c * d + x];
                    s[c] = causal && k0 + c > query ? -INFINITY : dot * scale_log2;
                    block_max = fmaxf(block_max, s[c]);
                }
                const float m_new = fmaxf(m[r], block_max);
                const float m_ref = m_new == -INFINITY ? 0.f : m_new; /* every key masked so far: p = 0, not NaN */
                const float alpha = exp2f(m[r] - m_ref);
                float *o = O_i + (size_t)r * d;
                m[r] = m_new;
                l[r] *= alpha;
                for (int x = 0; x < d; x++) o[x] *= alpha;
                for (int c = 0; c < kv_rows; c++) {
                    const float p = exp2f(s[c] - m_ref);
                    l[r] += p;
                    for (int x = 0; x < d; x++) o[x] += p * V_j[c * d + x];
                }
            }
        }
        /* Delayed normalisation: one division per row, then O_i and L_i are stored once. */
        for (int r = 0; r < q_rows; r++) {
            const float inv_l = l[r] > 0.f ? 1.f / l[r] : 0.f;
            for (int x = 0; x < d; x++) O_i[(size_t)r * d + x] *= inv_l;
            const float lse = l[r] > 0.f ? (m[r] + log2f(l[r])) * LN2 : -INFINITY; /* L = m + log l, natural log */
            counted_copy(L + q0 + r, &lse, 1, &io->write);
        }
        counted_copy(O + (size_t)q0 * d, O_i, (size_t)q_rows * d, &io->write);
    }
    free(Q_i), free(O_i), free(K_j), free(V_j), free(m), free(l), free(s);
}

void fwd_forward_cpu(const Options *o, BwdHost *t, IoBytes *io, double *ms) {
    const double t0 = wall_ms();
    const size_t heads = (size_t)o->B * o->H;
    for (size_t h = 0; h < heads; h++) {
        const size_t at = h * o->N * o->d;
        fwd_head_cpu(t->Q + at, t->K + at, t->V + at, t->O + at, t->L + h * o->N, o->N, o->d, FWD_BR, FWD_BC,
                     o->causal, io);
    }
    *ms = wall_ms() - t0;
}
