/* cpu.c: chapter 02's loop nest on host arrays that stand in for HBM. Bytes are counted where the kernels
 * load and store: K_j and V_j once per j, and on every step (j, i) Q_i, O_i, l_i, m_i in and O_i, l_i, m_i
 * out. As in the kernel, only the real rows of a ragged tile move. The arithmetic is the kernel's: scores in
 * log2 units, exp2, O_i multiplied back by l_i on load and divided by l_new on store. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ch02.h"
#include "host_tensor.h"
#include "progress.h"
#include "tiles.h"

#define LOG2E 1.4426950408889634f

/* Algorithm 1, line 2. */
void flash_v1_init_cpu(float *O, float *l, float *m, size_t rows, int d, IoBytes *io) {
    memset(O, 0, sizeof(float) * rows * d);
    for (size_t r = 0; r < rows; r++) {
        l[r] = 0.f;
        m[r] = -INFINITY;
    }
    io->write += sizeof(float) * rows * (d + 2);
}

/* Algorithm 1, lines 5-15, for one head. */
void flash_v1_head_cpu(const float *Q, const float *K, const float *V, float *O, float *l, float *m, int N,
                       int d, int Br, int Bc, IoBytes *io) {
    const float scale_log2 = LOG2E / sqrtf((float)d);
    float *K_j = host_alloc(sizeof(float) * Bc * d, "K_j"), *V_j = host_alloc(sizeof(float) * Bc * d, "V_j");
    float *Q_i = host_alloc(sizeof(float) * Br * d, "Q_i"), *O_i = host_alloc(sizeof(float) * Br * d, "O_i");
    float *l_i = host_alloc(sizeof(float) * Br, "l_i"), *m_i = host_alloc(sizeof(float) * Br, "m_i");
    float *s = host_alloc(sizeof(float) * Bc, "S_ij");
    const int Tr = (int)ceil_div(N, Br), Tc = (int)ceil_div(N, Bc);

    for (int j = 0; j < Tc; j++) {
        const int k0 = j * Bc, kv_rows = N - k0 < Bc ? N - k0 : Bc;
        counted_copy(K_j, K + (size_t)k0 * d, (size_t)kv_rows * d, &io->read); /* line 6 */
        counted_copy(V_j, V + (size_t)k0 * d, (size_t)kv_rows * d, &io->read);
        for (int i = 0; i < Tr; i++) {
            const int q0 = i * Br, q_rows = N - q0 < Br ? N - q0 : Br;
            counted_copy(Q_i, Q + (size_t)q0 * d, (size_t)q_rows * d, &io->read); /* line 8 */
            counted_copy(O_i, O + (size_t)q0 * d, (size_t)q_rows * d, &io->read);
            counted_copy(l_i, l + q0, q_rows, &io->read);
            counted_copy(m_i, m + q0, q_rows, &io->read);
            for (int r = 0; r < q_rows; r++) {
                float block_max = -INFINITY; /* line 9: S_ij, one row at a time, in log2 units */
                for (int c = 0; c < kv_rows; c++) {
                    float dot = 0.f;
                    for (int x = 0; x < d; x++) dot += Q_i[r * d + x] * K_j[c * d + x];
                    s[c] = dot * scale_log2;
                    block_max = fmaxf(block_max, s[c]);
                }
                /* ASSIGNMENT BEGIN v1-step [cpu]: what `make assignment CH=02` replaces with the stub below */
                /* ASSIGNMENT STUB v1-step
                // TODO: Algorithm 1, lines 10-13, for row r: m_new from m_i[r] and block_max, the p of each
                // key, l_new, O_i's row rescaled and added to and divided by l_new, then l_i[r] and m_i[r].
                // README: "Reading the code against Algorithm 1".
                (void)block_max;
                */
                const float m_new = fmaxf(m_i[r], block_max); /* lines 10 and 11 */
                const float alpha = exp2f(m_i[r] - m_new);
                float *o = O_i + (size_t)r * d;
                float l_new = l_i[r] * alpha;
                for (int x = 0; x < d; x++) o[x] *= l_i[r] * alpha; /* O_i unnormalised, rescaled */
                for (int c = 0; c < kv_rows; c++) {                 /* line 12 */
                    const float p = exp2f(s[c] - m_new);
                    l_new += p;
                    for (int x = 0; x < d; x++) o[x] += p * V_j[c * d + x];
                }
                for (int x = 0; x < d; x++) o[x] /= l_new;
                l_i[r] = l_new; /* line 13 */
                m_i[r] = m_new;
                /* ASSIGNMENT END v1-step */
            }
            counted_copy(O + (size_t)q0 * d, O_i, (size_t)q_rows * d, &io->write);
            counted_copy(l + q0, l_i, q_rows, &io->write);
            counted_copy(m + q0, m_i, q_rows, &io->write);
        }
    }
    free(K_j), free(V_j), free(Q_i), free(O_i), free(l_i), free(m_i), free(s);
}

void flash_v1_forward_cpu(const Options *o, AttnHost *t, IoBytes *io, double *ms) {
    const double t0 = wall_ms();
    float *l = t->extra[FV1_BUF_L], *m = t->extra[FV1_BUF_M];
    flash_v1_init_cpu(t->O, l, m, t->rows, o->d, &io[FV1_INIT]);
    const double t1 = wall_ms();
    const size_t heads = (size_t)o->B * o->H;
    Progress p;
    progress_begin(&p, "flash_v1 on the CPU");
    for (size_t h = 0; h < heads; h++) {
        const size_t at = h * o->N;
        flash_v1_head_cpu(t->Q + at * o->d, t->K + at * o->d, t->V + at * o->d, t->O + at * o->d, l + at, m + at,
                          o->N, o->d, o->Br, o->Bc, &io[FV1_MAIN]);
        progress_update(&p, (double)(h + 1), (double)heads);
    }
    progress_end(&p);
    ms[FV1_INIT] = t1 - t0;
    ms[FV1_MAIN] = wall_ms() - t1;
}

void flash_v1_L_from_l_m(AttnHost *t) {
    const float LN2 = 0.6931471805599453f;
    const float *l = t->extra[FV1_BUF_L], *m = t->extra[FV1_BUF_M];
    for (size_t r = 0; r < t->rows; r++)
        t->L[r] = l[r] > 0.f ? (m[r] + log2f(l[r])) * LN2 : l[r] == 0.f ? -INFINITY : l[r] + m[r]; /* NaN stays NaN */
}
