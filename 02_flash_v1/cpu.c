/* cpu.c: chapter 02's loop nest on host arrays that stand in for HBM. Bytes are counted where the kernels
 * load and store: K_j and V_j once per j, and on every step (j, i) Q_i, O_i, l_i, m_i in and O_i, l_i, m_i
 * out. As in the kernel, only the real rows of a ragged tile move. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ch02.h"
#include "host_tensor.h"
#include "tiles.h"

void flash_v1_inputs(const Options *o, float *Q, float *K, float *V) {
    const size_t n = (size_t)o->B * o->H * o->N * o->d;
    Rng r = rng_seeded(o->seed);
    fill_uniform(Q, n, &r, -2.f, 2.f);
    fill_uniform(K, n, &r, -2.f, 2.f);
    fill_uniform(V, n, &r, -1.f, 1.f);
}

/* Algorithm 1, line 2. */
void flash_v1_init_cpu(float *O, float *l, float *m, size_t rows, int d, IoBytes *io) {
    memset(O, 0, sizeof(float) * rows * d);
    for (size_t r = 0; r < rows; r++) {
        l[r] = 0.f;
        m[r] = -INFINITY;
    }
    io->write += sizeof(float) * rows * (d + 2);
}

/* dst <- src, n floats, counted as a load (io->read) or a store (io->write) by the caller's choice. */
static void move(float *dst, const float *src, size_t n, unsigned long long *bytes) {
    memcpy(dst, src, sizeof(float) * n);
    *bytes += sizeof(float) * n;
}

/* Algorithm 1, lines 5-15, for one head. */
void flash_v1_head_cpu(const float *Q, const float *K, const float *V, float *O, float *l, float *m, int N,
                       int d, int Br, int Bc, IoBytes *io) {
    const float scale = 1.0f / sqrtf((float)d);
    float *K_j = malloc(sizeof(float) * Bc * d), *V_j = malloc(sizeof(float) * Bc * d);
    float *Q_i = malloc(sizeof(float) * Br * d), *O_i = malloc(sizeof(float) * Br * d);
    float *l_i = malloc(sizeof(float) * Br), *m_i = malloc(sizeof(float) * Br);
    float *P = malloc(sizeof(float) * Bc), *pv = malloc(sizeof(float) * d);
    const int Tr = (int)ceil_div_ll(N, Br), Tc = (int)ceil_div_ll(N, Bc);

    for (int j = 0; j < Tc; j++) {
        const int k0 = j * Bc, kv_rows = N - k0 < Bc ? N - k0 : Bc;
        move(K_j, K + (size_t)k0 * d, (size_t)kv_rows * d, &io->read); /* line 6 */
        move(V_j, V + (size_t)k0 * d, (size_t)kv_rows * d, &io->read);
        for (int i = 0; i < Tr; i++) {
            const int q0 = i * Br, q_rows = N - q0 < Br ? N - q0 : Br;
            move(Q_i, Q + (size_t)q0 * d, (size_t)q_rows * d, &io->read); /* line 8 */
            move(O_i, O + (size_t)q0 * d, (size_t)q_rows * d, &io->read);
            move(l_i, l + q0, q_rows, &io->read);
            move(m_i, m + q0, q_rows, &io->read);
            for (int r = 0; r < q_rows; r++) {
                float m_tilde = -INFINITY; /* line 9: S_ij, one row at a time */
                for (int c = 0; c < kv_rows; c++) {
                    float s = 0.f;
                    for (int x = 0; x < d; x++) s += Q_i[r * d + x] * K_j[c * d + x];
                    P[c] = scale * s;
                    m_tilde = fmaxf(m_tilde, P[c]);
                }
                float l_tilde = 0.f; /* line 10 */
                for (int c = 0; c < kv_rows; c++) l_tilde += (P[c] = expf(P[c] - m_tilde));
                const float m_new = fmaxf(m_i[r], m_tilde); /* line 11 */
                const float old_scale = expf(m_i[r] - m_new), new_scale = expf(m_tilde - m_new);
                const float l_new = old_scale * l_i[r] + new_scale * l_tilde;
                const float w_old = l_i[r] * old_scale / l_new, w_new = new_scale / l_new;
                memset(pv, 0, sizeof(float) * d); /* line 12 */
                for (int c = 0; c < kv_rows; c++)
                    for (int x = 0; x < d; x++) pv[x] += P[c] * V_j[c * d + x];
                for (int x = 0; x < d; x++) O_i[r * d + x] = w_old * O_i[r * d + x] + w_new * pv[x];
                l_i[r] = l_new; /* line 13 */
                m_i[r] = m_new;
            }
            move(O + (size_t)q0 * d, O_i, (size_t)q_rows * d, &io->write);
            move(l + q0, l_i, q_rows, &io->write);
            move(m + q0, m_i, q_rows, &io->write);
        }
    }
    free(K_j), free(V_j), free(Q_i), free(O_i), free(l_i), free(m_i), free(P), free(pv);
}

static Timing one_run(double ms) {
    Timing t = {ms, ms, 1};
    return t;
}

void flash_v1_run_cpu(const Options *o, KernelRun *runs) {
    const size_t heads = (size_t)o->B * o->H, rows = heads * o->N, n = rows * o->d;
    float *Q = malloc(sizeof(float) * n), *K = malloc(sizeof(float) * n), *V = malloc(sizeof(float) * n);
    float *O = malloc(sizeof(float) * n), *l = malloc(sizeof(float) * rows), *m = malloc(sizeof(float) * rows);
    if (!Q || !K || !V || !O || !l || !m) {
        fprintf(stderr, "error: out of host memory for the CPU version (%zu floats per tensor)\n", n);
        exit(3);
    }
    flash_v1_inputs(o, Q, K, V);

    IoBytes io[FV1_KERNELS] = {{0, 0}, {0, 0}};
    const double t0 = wall_ms();
    flash_v1_init_cpu(O, l, m, rows, o->d, &io[FV1_INIT]);
    const double t1 = wall_ms();
    for (size_t h = 0; h < heads; h++) {
        const size_t at = h * o->N;
        flash_v1_head_cpu(Q + at * o->d, K + at * o->d, V + at * o->d, O + at * o->d, l + at, m + at, o->N, o->d,
                          o->Br, o->Bc, &io[FV1_MAIN]);
    }
    const double t2 = wall_ms();
    const double ms[FV1_KERNELS] = {t1 - t0, t2 - t1};
    for (int k = 0; k < FV1_KERNELS; k++) {
        runs[k].have_time = 1;
        runs[k].time = one_run(ms[k]);
        runs[k].have_counted = 1;
        runs[k].counted = io[k];
    }

    if (!o->no_check) {
        int idx[FV1_CHECK_HEADS];
        const int count = sample_heads((int)heads, FV1_CHECK_HEADS, idx);
        ErrorStats err = error_stats_empty();
        for (int s = 0; s < count; s++) {
            const size_t at = (size_t)idx[s] * o->N;
            flash_v1_check_head(o, Q, K, V, idx[s], O + at * o->d, l + at, m + at, &err, NULL);
        }
        runs[FV1_MAIN].have_check = 1;
        runs[FV1_MAIN].err = err;
        runs[FV1_MAIN].tol = FV1_TOL;
    }
    free(Q), free(K), free(V), free(O), free(l), free(m);
}
