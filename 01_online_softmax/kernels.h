/* kernels.h: chapter 01's GPU launchers (kernels.cu), in both builds: name (timed) and name_counted
 * (instrumented, -DCOUNT_IO). All pointers are device pointers; x and y hold rows x N floats, row-major,
 * and must share their alignment modulo 16 bytes (any two cudaMalloc'ed buffers do). */
#ifndef CH01_KERNELS_H
#define CH01_KERNELS_H

#ifdef __cplusplus
extern "C" {
#endif

/* Chunk length of softmax_blockwise in the chapter's runs: C elements of a row per thread block. */
#define BLOCKWISE_CHUNK 8192

/* Largest thread block the launchers use (threads_per_block never returns more). */
#define MAX_THREADS 512

/* Safe softmax, three passes over the row: max, sum of exp, normalise. One block per row. */
void softmax_3pass(const float *x, float *y, long long rows, int N);
void softmax_3pass_counted(const float *x, float *y, long long rows, int N);

/* Online softmax, two passes: running (m, l), then normalise. One block per row. */
void softmax_online(const float *x, float *y, long long rows, int N);
void softmax_online_counted(const float *x, float *y, long long rows, int N);

/* Blockwise softmax: each row cut into K = ceil(N / C) chunks of C elements, one block per chunk. Launch 1
 * writes each chunk's (m_k, l_k) into ml (2 floats per chunk, rows * K pairs); launch 2 merges the row's K
 * pairs in every block and normalises that block's chunk. */
void softmax_blockwise(const float *x, float *y, float *ml, long long rows, int N, int C);
void softmax_blockwise_counted(const float *x, float *y, float *ml, long long rows, int N, int C);

/* Launch shapes, shared by the launchers, the model's printout and the tests (defined in model.c). */
int blockwise_chunks(int N, int C);        /* K = ceil(N / C)                              */
int threads_per_block(long long elements); /* threads of a block that reads `elements` floats */

#ifdef __cplusplus
}
#endif
#endif
