/* model.c: the bytes each kernel requests from global memory, in closed form, and the launch shapes.
 *
 * R rows of N floats (4 bytes), chunk length C, K = ceil(N / C) chunks per row:
 *   softmax_3pass      read 3*R*N*4                    write R*N*4          (max; sum; normalise)
 *   softmax_online     read 2*R*N*4                    write R*N*4          ((m, l); normalise)
 *   softmax_blockwise  read 2*R*N*4 + R*K*K*8          write R*N*4 + R*K*8
 *     launch 1 reads the row once and writes one (m_k, l_k) pair (2 floats) per chunk; launch 2 reads the row
 *     once more and writes it, and each of its K blocks per row reads all K pairs of the row.
 *   compulsory         read R*N*4                      write R*N*4          (x in, y out, once each)
 * The chapter's tests check these against the CPU versions' counts (any shape) and the instrumented GPU build
 * (to the byte). */
#include <stdio.h>

#include "ch01.h"
#include "checked_math.h"
#include "kernels.h"

const char *const ch01_kernel_names[CH01_KERNELS] = {"softmax_3pass", "softmax_online", "softmax_blockwise"};

int blockwise_chunks(int N, int C) { return (int)(((long long)N + C - 1) / C); }

/* At least 16 elements (four float4) per thread where the row is long enough, between one warp and
 * MAX_THREADS threads: short rows get small blocks, so that many rows are in flight on every SM. */
int threads_per_block(long long elements) {
    int t = 32;
    while (t < MAX_THREADS && 16LL * t < elements) t *= 2;
    return t;
}

static const unsigned long long F = sizeof(float);
static const unsigned long long PAIR = 2 * sizeof(float);

/* In checked_math.h's checked arithmetic: exact, or the flag is raised (the size is rejected). */
static unsigned long long row_bytes(long long R, int N, unsigned long long times) {
    return count_mul4(times, (unsigned long long)R, (unsigned long long)N, F);
}

IoBytes model_compulsory(long long R, int N) { return io_bytes(row_bytes(R, N, 1), row_bytes(R, N, 1)); }
IoBytes model_3pass(long long R, int N) { return io_bytes(row_bytes(R, N, 3), row_bytes(R, N, 1)); }
IoBytes model_online(long long R, int N) { return io_bytes(row_bytes(R, N, 2), row_bytes(R, N, 1)); }

IoBytes model_blockwise(long long R, int N, int C) {
    const unsigned long long K = (unsigned long long)blockwise_chunks(N, C);
    return io_bytes(count_add(row_bytes(R, N, 2), count_mul4((unsigned long long)R, K, K, PAIR)),
                    count_add(row_bytes(R, N, 1), count_mul3((unsigned long long)R, K, PAIR)));
}

IoBytes model_of(int kernel, long long R, int N, int C) {
    switch (kernel) {
    case SOFTMAX_3PASS: return model_3pass(R, N);
    case SOFTMAX_ONLINE: return model_online(R, N);
    default: return model_blockwise(R, N, C);
    }
}

long long ch01_rows(const Options *o) { return option_value(o, ch01_options, CH01_OPT_ROWS); }

int ch01_models(const Options *o, KernelModel *m) {
    for (int k = 0; k < CH01_KERNELS; k++) {
        m[k].kernel = ch01_kernel_names[k];
        m[k].flops = 0; /* no matrix product */
        m[k].softmax_ops = count_mul3(5, (unsigned long long)ch01_rows(o), (unsigned long long)o->N);
        m[k].model = model_of(k, ch01_rows(o), o->N, BLOCKWISE_CHUNK);
        m[k].ideal = model_compulsory(ch01_rows(o), o->N);
    }
    return CH01_KERNELS;
}

void ch01_print_model_extra(FILE *f, const Options *o, const DeviceInfo *dev) {
    const long long R = ch01_rows(o);
    const int N = o->N, C = BLOCKWISE_CHUNK, K = blockwise_chunks(N, C);
    const int T = threads_per_block(N), Tc = threads_per_block(N < C ? N : C);
    char a[32], b[32];
    fprintf(f, "rows: R = %lld rows of N = %d floats (%s bytes per row)\n", R, N, fmt_bytes(N * F, a, sizeof(a)));
    fprintf(f, "softmax_3pass, softmax_online: %lld blocks of %d threads, one block per row\n", R, T);
    fprintf(f, "softmax_blockwise: chunks of C = %d, K = %d per row: 2 launches of %lld blocks of %d threads;\n"
               "  partial (m, l) pairs: %s bytes written, %s bytes read (K pairs per block)\n",
            C, K, R * K, Tc, fmt_bytes(count_mul3((unsigned long long)R, K, PAIR), a, sizeof(a)),
            fmt_bytes(count_mul4((unsigned long long)R, K, K, PAIR), b, sizeof(b)));
    fprintf(f, "bytes per element: 3pass %.0f, online %.0f, blockwise %.4f, compulsory 8\n",
            (double)io_total(model_3pass(1, N)) / N, (double)io_total(model_online(1, N)) / N,
            (double)io_total(model_blockwise(1, N, C)) / N);
    if (!dev || !dev->present) return;
    /* The re-reads of softmax_3pass and softmax_online reach DRAM only when the rows being worked on at once
     * do not fit in the L2. An upper bound on that working set: every SM full of one-row blocks. */
    const long long blocks_in_flight = (long long)dev->sms * (dev->max_threads_per_sm / T);
    const long long rows_in_flight = blocks_in_flight < R ? blocks_in_flight : R;
    const double working_set = (double)rows_in_flight * N * F;
    fprintf(f, "L2: at most %lld rows in flight (%d SMs x %d blocks of %d threads) = %.1f MB %s the %.0f MB L2:\n"
               "  %s\n",
            rows_in_flight, dev->sms, dev->max_threads_per_sm / T, T, working_set / 1e6,
            working_set < dev->l2_bytes ? "<" : ">=", dev->l2_bytes / 1e6,
            working_set < dev->l2_bytes
                ? "re-reads of a row can hit the L2, so DRAM traffic may stay near the compulsory bytes"
                : "re-reads of a row find it evicted: DRAM traffic follows the model bytes");
}
