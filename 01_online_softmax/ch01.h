/* ch01.h: chapter 01's host side: the IO model, the CPU versions, the bridge to chapter 02, the inputs and
 * the checks. Used by the chapter's program and by tests/ch01. */
#ifndef CH01_H
#define CH01_H

#include <stddef.h>

#include "driver.h"
#include "io_bytes.h"
#include "max_sum.h"
#include "reference.h"

/* The report's rows, in this order. */
enum { SOFTMAX_3PASS, SOFTMAX_ONLINE, SOFTMAX_BLOCKWISE, CH01_KERNELS };
extern const char *const ch01_kernel_names[CH01_KERNELS];

/* Relative L2 error every check allows against the float64 reference (fp32 storage and arithmetic; observed
 * errors are 1e-7..1e-6 up to rows of 2^20). */
#define CH01_TOL 1e-5

/* --rows R, the chapter's option (chapter.c): the number of rows, B*H*N without it. */
enum { CH01_OPT_ROWS }; /* the index of --rows among the chapter's options */
extern const ChapterOption ch01_options[];
long long ch01_rows(const Options *o);

// ---- model.c: closed forms of the bytes each kernel requests (rows R of N floats) -------------------------
IoBytes model_3pass(long long R, int N);           /* read 3*R*N*4, write R*N*4                      */
IoBytes model_online(long long R, int N);          /* read 2*R*N*4, write R*N*4                      */
IoBytes model_blockwise(long long R, int N, int C); /* + K pairs (8 B) written, K*K pairs read per row */
IoBytes model_compulsory(long long R, int N);      /* read R*N*4, write R*N*4                        */
IoBytes model_of(int kernel, long long R, int N, int C);
int ch01_models(const Options *o, KernelModel *m);
void ch01_print_model_extra(FILE *f, const Options *o, const DeviceInfo *dev);

// ---- cpu.c: the same algorithms on host arrays, counting bytes as the kernels do --------------------------
/* Lanes of the CPU versions: the stand-in for a thread block's threads. Lane j keeps its own statistic over
 * elements j, j + LANES, j + 2*LANES, ...; a tree merges the lanes at the end of a pass, as shuffles do. */
#define CPU_LANES 256
void softmax_3pass_cpu(const float *x, float *y, long long R, int N, IoBytes *io);
void softmax_online_cpu(const float *x, float *y, long long R, int N, IoBytes *io);
void softmax_blockwise_cpu(const float *x, float *y, float *ml, long long R, int N, int C, IoBytes *io);
/* One of the three by index; ml (R * K pairs) is used by the blockwise version only. */
void softmax_cpu(int kernel, const float *x, float *y, float *ml, long long R, int N, int C, IoBytes *io);
/* (m, l) of x[0..n) with CPU_LANES lanes, counting the reads into io (may be NULL). */
MaxSum row_statistics_cpu(const float *x, int n, IoBytes *io);

// ---- bridge.c: chapter 02 in miniature --------------------------------------------------------------------
/* One query row's attention, o = softmax(scale * q K^T) V with scale = 1/sqrt(d), computed over blocks of Bc
 * keys with the online update of the output accumulator; the whole score row never exists. q, o: d floats;
 * K, V: n_keys x d, row-major (n_keys >= 1). Returns the row's log-sum-exp, m + log(l). */
float attention_row_online(const float *q, const float *K, const float *V, int n_keys, int d, int Bc, float *o);

// ---- inputs.c: the scores, and the checks against the float64 reference -----------------------------------
/* Element i of the R x N input is pool[i mod SCORE_POOL_SIZE], a pool of N(0, 1) scores drawn from the seed:
 * a 4 GB input needs no 4 GB host array, and the CPU and GPU runs of one seed see the same scores. The pool
 * size is prime, so rows do not repeat each other for any N; inputs up to 2^22 elements are all distinct. */
#define SCORE_POOL_SIZE 4194319
typedef struct {
    float *v;
} ScorePool;
ScorePool score_pool(unsigned long long seed);
void score_pool_free(ScorePool *p);
void score_pool_fill(const ScorePool *p, size_t first, size_t count, float *dst);

/* Rows compared with reference_softmax_rows: every row when R*N <= CHECK_ELEMENTS, else a sample (first,
 * last, evenly spaced; at least 2 rows). */
#define CHECK_ELEMENTS (1 << 22)
int check_row_sample(long long R, int N, int *idx);
/* Errors over the sampled rows of y (host array, or device pointer), against the pool's scores. */
ErrorStats check_rows_host(const ScorePool *p, const float *y, long long R, int N);
ErrorStats check_rows_device(const ScorePool *p, const float *y_dev, long long R, int N);
/* Non-finite values in n floats on the device (an element a kernel forgot to write is NaN). */
size_t count_nonfinite_device(const float *y_dev, size_t n);

// ---- gpu.c ------------------------------------------------------------------------------------------------
/* Launches kernel `kernel` (timed build, or the instrumented one when counted != 0) on device pointers. */
void softmax_launch(int kernel, int counted, const float *x, float *y, float *ml, long long R, int N, int C);
void ch01_run_gpu(const Options *o, const DeviceInfo *dev, KernelRun *runs);
/* --save (save.h): x.npy, the input rows [rows, N] from the pool, written in pieces; y_KERNEL.npy, kernel k's
 * output rows, from the device in pieces (y_dev) or from a host array (y_host). */
void ch01_save_x(const Options *o, const ScorePool *pool);
void ch01_save_y(const Options *o, int kernel, const float *y_dev, const float *y_host);
size_t ch01_device_bytes(const Options *o);
/* Host memory of the CPU run (cpu != 0: x, y, the pairs) or of the GPU run; both with the score pool and the
 * check's rows. */
size_t ch01_host_bytes(const Options *o, int cpu);

#endif
