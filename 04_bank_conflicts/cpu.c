/* cpu.c: chapter 04's loop nest on host arrays that stand in for HBM: chapter 03's, with K read through the
 * layout's strides (K as stored, or K^T after a counted transposition) and its bytes counted as the kernel
 * loads them. The arithmetic is the kernel's: scores in log2 units, exp2, one division per row at the end. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ch04.h"
#include "host_tensor.h"
#include "progress.h"
#include "tiles.h"

#define LOG2E 1.4426950408889634f
#define LN2 0.6931471805599453f

void k_transpose_cpu(const float *K, float *Kt, size_t heads, int N, int d, IoBytes *io) {
    const size_t stride = (size_t)attn_kt_stride(N);
    for (size_t h = 0; h < heads; h++)
        for (int x = 0; x < d; x++)
            for (size_t key = 0; key < stride; key++)
                Kt[(h * d + x) * stride + key] = key < (size_t)N ? K[(h * N + key) * d + x] : 0.f;
    io->read += sizeof(float) * heads * N * d;
    io->write += sizeof(float) * heads * d * stride;
}

void flash_v4_head_cpu(const float *Q, const float *K, int ks, int xs, const float *V, float *O, float *L, int N,
                       int d, int Br, int Bc, int causal, int round_k_cols, IoBytes *io) {
    const float scale_log2 = LOG2E / sqrtf((float)d);
    float *Q_i = host_alloc(sizeof(float) * Br * d, "Q_i"), *O_i = host_alloc(sizeof(float) * Br * d, "O_i");
    float *V_j = host_alloc(sizeof(float) * Bc * d, "V_j");
    float *m = host_alloc(sizeof(float) * Br, "m"), *l = host_alloc(sizeof(float) * Br, "l");
    float *s = host_alloc(sizeof(float) * Bc, "S_ij");
    const int Tr = (int)ceil_div(N, Br), Tc = (int)ceil_div(N, Bc);

    for (int i = 0; i < Tr; i++) {
        const int q0 = i * Br, q_rows = N - q0 < Br ? N - q0 : Br;
        counted_copy(Q_i, Q + (size_t)q0 * d, (size_t)q_rows * d, &io->read); /* once per query block */
        for (int r = 0; r < q_rows; r++) m[r] = -INFINITY, l[r] = 0.f;
        memset(O_i, 0, sizeof(float) * Br * d);
        for (int j = 0; j < Tc && (!causal || j * Bc <= q0 + q_rows - 1); j++) {
            const int k0 = j * Bc, kv_rows = N - k0 < Bc ? N - k0 : Bc;
            const int k_cols = round_k_cols ? (kv_rows + 3) / 4 * 4 : kv_rows;
            io->read += sizeof(float) * (size_t)d * k_cols; /* K_j, or K^T_j's whole float4 */
            counted_copy(V_j, V + (size_t)k0 * d, (size_t)kv_rows * d, &io->read);
            for (int r = 0; r < q_rows; r++) {
                const int query = q0 + r;
                float block_max = -INFINITY;
                for (int c = 0; c < kv_rows; c++) { /* S_ij, one row at a time, in log2 units */
                    const float *key = K + (size_t)(k0 + c) * ks;
                    float dot = 0.f;
                    for (int x = 0; x < d; x++) dot += Q_i[r * d + x] * key[(size_t)x * xs];
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
        for (int r = 0; r < q_rows; r++) { /* delayed normalisation; O_i and L_i stored once */
            const float inv_l = l[r] > 0.f ? 1.f / l[r] : 0.f;
            for (int x = 0; x < d; x++) O_i[(size_t)r * d + x] *= inv_l;
            const float lse = l[r] > 0.f ? (m[r] + log2f(l[r])) * LN2 : -INFINITY;
            counted_copy(L + q0 + r, &lse, 1, &io->write);
        }
        counted_copy(O + (size_t)q0 * d, O_i, (size_t)q_rows * d, &io->write);
    }
    free(Q_i), free(O_i), free(V_j), free(m), free(l), free(s);
}

void flash_v4_forward_cpu(const Options *o, AttnHost *t, IoBytes *io, double *ms) {
    const size_t heads = (size_t)o->B * o->H;
    const int transposed = layout_of(o) == LAYOUT_TRANSPOSED, stride = attn_kt_stride(o->N);
    float *Kt = NULL;
    int k = 0;
    double t0 = wall_ms();
    if (transposed) {
        Kt = host_alloc(sizeof(float) * heads * o->d * stride, "K^T");
        k_transpose_cpu(t->K, Kt, heads, o->N, o->d, &io[k]);
        ms[k++] = wall_ms() - t0;
        t0 = wall_ms();
    }
    Progress p;
    progress_begin(&p, "flash_v4 on the CPU");
    for (size_t h = 0; h < heads; h++) {
        const size_t at = h * o->N * o->d;
        const float *K = transposed ? Kt + h * o->d * stride : t->K + at;
        flash_v4_head_cpu(t->Q + at, K, transposed ? 1 : o->d, transposed ? stride : 1, t->V + at, t->O + at,
                          t->L + h * o->N, o->N, o->d, o->Br, o->Bc, o->causal, transposed, &io[k]);
        progress_update(&p, (double)(h + 1), (double)heads);
    }
    progress_end(&p);
    ms[k] = wall_ms() - t0;
    free(Kt);
}
