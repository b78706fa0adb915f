/* ch02.h: chapter 02's host side: the inputs, the CPU version of the loop nest, the checks, and the GPU run.
 * Used by the chapter's program and by tests/ch02. The closed forms are in model.h, the tiles in tiles.h. */
#ifndef FA_CH02_H
#define FA_CH02_H

#include <stddef.h>

#include "chapter.h"
#include "io.h"
#include "model.h"
#include "reference.h"

/* Relative L2 error every check allows against the float64 reference (fp32 storage and arithmetic). */
#define FV1_TOL 1e-5
/* Heads compared with the reference: all of them up to this many, else a sample (first, last, between). */
#define FV1_CHECK_HEADS 8

extern const Chapter chapter02;

/* Q and K uniform in [-2, 2), V in [-1, 1), from o->seed: scores of standard deviation about 1.3, so the
 * running maximum moves between K/V blocks. Each array holds B*H*N*d floats. */
void flash_v1_inputs(const Options *o, float *Q, float *K, float *V);

// ---- cpu.c: the kernels' loop nest on host arrays, counting bytes where the kernels load and store -------
void flash_v1_init_cpu(float *O, float *l, float *m, size_t rows, int d, IoBytes *io);
/* One head: Q, K, V, O are N x d, l and m N floats. */
void flash_v1_head_cpu(const float *Q, const float *K, const float *V, float *O, float *l, float *m, int N,
                       int d, int Br, int Bc, IoBytes *io);
void flash_v1_run_cpu(const Options *o, KernelRun *runs);

// ---- check.c ----------------------------------------------------------------------------------------------
/* Compares head h's outputs (O_h: N x d, l_h and m_h: N) with the float64 reference: O into *o_err, and the
 * log-sum-exp m + log(l) into *lse_err (may be NULL). Q, K, V hold every head. */
void flash_v1_check_head(const Options *o, const float *Q, const float *K, const float *V, int h,
                         const float *O_h, const float *l_h, const float *m_h, ErrorStats *o_err,
                         ErrorStats *lse_err);

// ---- gpu.c ------------------------------------------------------------------------------------------------
size_t flash_v1_device_bytes(const Options *o);
void flash_v1_run_gpu(const Options *o, const DeviceInfo *dev, KernelRun *runs);
/* One forward pass on the GPU for tests: uploads Q, K, V (every head), poisons O, l and m with NaN, runs
 * flash_v1_init and flash_v1 (the instrumented build when counted != 0, then io[FV1_INIT], io[FV1_MAIN]
 * receive the counted bytes), and downloads O, l and m (every head). */
void flash_v1_forward_gpu(const Options *o, const float *Q, const float *K, const float *V, float *O, float *l,
                          float *m, int counted, IoBytes io[FV1_KERNELS]);

#endif
