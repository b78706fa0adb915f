/* cpu.c: the three softmax kernels on host arrays, the loop nests of kernels.cu with the host standing in for
 * HBM. LOAD and STORE count bytes exactly as IO_LOAD and IO_STORE do on the GPU, so the tests can hold the
 * closed-form model against these counts for any shape.
 *
 * A thread block's threads become CPU_LANES lanes: lane j keeps its own running statistic over elements
 * j, j + LANES, ... of the row, and a tree merges the lanes at the end of each pass, as the shuffles and the
 * shared-memory step do. Besides mirroring the GPU, this keeps fp32 sums short (N / LANES terms each), so the
 * CPU versions' errors stay at the GPU's level even for rows of 2^20 elements. */
#include <stdlib.h>
#include <string.h>

#include "ch01.h"
#include "kernels.h"

#define LOAD(v) (io->read += sizeof(v), (v))
#define STORE(dst, v) (io->write += sizeof(dst), (dst) = (v))

static float max_cpu(const float *x, int n, IoBytes *io) { /* max is exact in any order: no lanes needed */
    float m = -INFINITY;
    for (int i = 0; i < n; i++) m = fmaxf(m, LOAD(x[i]));
    return m;
}

static float sum_exp_cpu(const float *x, int n, float m_shift, IoBytes *io) {
    float lane[CPU_LANES] = {0};
    for (int i0 = 0; i0 < n; i0 += CPU_LANES)
        for (int j = 0; j < CPU_LANES && i0 + j < n; j++) lane[j] += expf(LOAD(x[i0 + j]) - m_shift);
    for (int w = CPU_LANES / 2; w > 0; w /= 2)
        for (int j = 0; j < w; j++) lane[j] += lane[j + w];
    return lane[0];
}

static MaxSum stats_cpu(const float *x, int n, IoBytes *io) {
    MaxSum lane[CPU_LANES];
    for (int j = 0; j < CPU_LANES; j++) lane[j] = max_sum_empty();
    for (int i0 = 0; i0 < n; i0 += CPU_LANES)
        for (int j = 0; j < CPU_LANES && i0 + j < n; j++) lane[j] = max_sum_add(lane[j], LOAD(x[i0 + j]));
    for (int w = CPU_LANES / 2; w > 0; w /= 2)
        for (int j = 0; j < w; j++) lane[j] = max_sum_merge(lane[j], lane[j + w]);
    return lane[0];
}

MaxSum row_statistics_cpu(const float *x, int n, IoBytes *io) {
    IoBytes ignored = {0, 0};
    return stats_cpu(x, n, io ? io : &ignored);
}

static void normalise_cpu(const float *x, float *y, int n, Normaliser z, IoBytes *io) {
    for (int i = 0; i < n; i++) STORE(y[i], normalise(z, LOAD(x[i])));
}

void softmax_3pass_cpu(const float *x, float *y, long long R, int N, IoBytes *io) {
    for (long long r = 0; r < R; r++) {
        const float *x_row = x + (size_t)r * N;
        const float m = max_cpu(x_row, N, io);                       /* pass 1 */
        const float l = sum_exp_cpu(x_row, N, shift_for_exp(m), io); /* pass 2 */
        const Normaliser z = normaliser(max_sum(m, l));
        normalise_cpu(x_row, y + (size_t)r * N, N, z, io); /* pass 3 */
    }
}

void softmax_online_cpu(const float *x, float *y, long long R, int N, IoBytes *io) {
    for (long long r = 0; r < R; r++) {
        const float *x_row = x + (size_t)r * N;
        const MaxSum s = stats_cpu(x_row, N, io);                     /* pass 1 */
        normalise_cpu(x_row, y + (size_t)r * N, N, normaliser(s), io); /* pass 2 */
    }
}

/* ml holds R*K pairs (m_k, l_k), two floats each: the GPU's float2. */
void softmax_blockwise_cpu(const float *x, float *y, float *ml, long long R, int N, int C, IoBytes *io) {
    const int K = blockwise_chunks(N, C);
    for (long long r = 0; r < R; r++) /* launch 1: one (m_k, l_k) per chunk */
        for (int k = 0; k < K; k++) {
            const int begin = k * C, n = N - begin < C ? N - begin : C;
            const MaxSum s = stats_cpu(x + (size_t)r * N + begin, n, io);
            float *pair = ml + 2 * ((size_t)r * K + k);
            STORE(pair[0], s.m);
            STORE(pair[1], s.l);
        }
    for (long long r = 0; r < R; r++) /* launch 2: each chunk merges its row's K pairs, then normalises */
        for (int k = 0; k < K; k++) {
            MaxSum s = max_sum_empty();
            for (int j = 0; j < K; j++) {
                const float *pair = ml + 2 * ((size_t)r * K + j);
                const float m_j = LOAD(pair[0]), l_j = LOAD(pair[1]);
                s = max_sum_merge(s, max_sum(m_j, l_j));
            }
            const int begin = k * C, n = N - begin < C ? N - begin : C;
            const size_t at = (size_t)r * N + begin;
            normalise_cpu(x + at, y + at, n, normaliser(s), io);
        }
}

void softmax_cpu(int kernel, const float *x, float *y, float *ml, long long R, int N, int C, IoBytes *io) {
    switch (kernel) {
    case SOFTMAX_3PASS: softmax_3pass_cpu(x, y, R, N, io); break;
    case SOFTMAX_ONLINE: softmax_online_cpu(x, y, R, N, io); break;
    default: softmax_blockwise_cpu(x, y, ml, R, N, C, io); break;
    }
}
