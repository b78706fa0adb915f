/* ch00.h: chapter 00's host side: the inputs, the CPU version of the three kernels, the checks, the cuBLAS
 * GEMMs and the GPU run. Used by the chapter's program and by tests/ch00. The closed forms are in model.h,
 * the tiles in tiles.h, the launchers in kernels.h. */
#ifndef FA_CH00_H
#define FA_CH00_H

#include <stddef.h>

#include "driver.h"
#include "io_bytes.h"
#include "kernels.h"
#include "model.h"
#include "reference.h"

/* Relative L2 error every check allows against the float64 reference (README: why these two). */
#define SA_TOL_FP32 1e-5
#define SA_TOL_FP16 2e-3
double std_attn_tolerance(const Options *o);

extern const Chapter chapter00;

/* Q and K uniform in [-2, 2), V in [-1, 1), from o->seed, rounded through half for fp16 (so that the host
 * copies hold exactly what the device stores). Each array holds B*H*N*d floats. */
void std_attn_inputs(const Options *o, float *Q, float *K, float *V);

// ---- cpu.c: the kernels' blocking on host arrays that stand in for HBM, counting bytes where they move ----
/* What an element of storage type t holds: x itself (fp32) or x rounded to half (fp16). */
float std_attn_stored(float x, DType t);
/* One head: S (N x N) = scale Q K^T, Q and K N x d. */
void qk_gemm_cpu(const float *Q, const float *K, float *S, int N, int d, DType t, IoBytes *io);
/* `rows` rows of N scores: P = softmax(S), row by row. */
void softmax_cpu(const float *S, float *P, long long rows, int N, DType t, IoBytes *io);
/* One head: O (N x d) = P V. */
void pv_gemm_cpu(const float *P, const float *V, float *O, int N, int d, DType t, IoBytes *io);
/* All heads, the three steps in order; io[k] and ms[k] (may be NULL) receive each step's bytes and time. */
void std_attn_forward_cpu(const Options *o, const float *Q, const float *K, const float *V, float *S, float *P,
                          float *O, IoBytes io[SA_KERNELS], double *ms);
void std_attn_run_cpu(const Options *o, KernelRun *runs);

// ---- check.c ----------------------------------------------------------------------------------------------
/* Heads to compare with the reference: all of them up to 8, fewer for big heads (the float64 reference
 * costs about 3 N^2 d multiply-adds per head); returns how many were written to idx (at most 8). */
int std_attn_check_heads(const Options *o, int *idx);
/* Head h's float64 reference: S_ref and P_ref (N x N), O_ref (N x d) (reference_attention_head, not P_ref V).
 * Q, K, V hold every head. */
void std_attn_reference_head(const Options *o, const float *Q, const float *K, const float *V, int h, double *S_ref,
                             double *P_ref, double *O_ref);
/* One head's S_h, P_h, O_h against its reference, merged into err[SA_QK], err[SA_SOFTMAX], err[SA_PV]. */
void std_attn_compare_head(const Options *o, const float *S_h, const float *P_h, const float *O_h, const double *S_ref,
                           const double *P_ref, const double *O_ref, ErrorStats err[SA_KERNELS]);
/* Both of the above for head h. */
void std_attn_check_head(const Options *o, const float *Q, const float *K, const float *V, int h, const float *S_h,
                         const float *P_h, const float *O_h, ErrorStats err[SA_KERNELS]);
/* Fills runs[k] (k < SA_KERNELS) with the merged errors and the tolerance. */
void std_attn_set_checks(const Options *o, const ErrorStats err[SA_KERNELS], KernelRun *runs);

// ---- cublas.c ---------------------------------------------------------------------------------------------
/* A cuBLAS handle (opaque), created once, outside every timed region. */
void *cublas_gemms_create(void);
void cublas_gemms_destroy(void *handle);
/* S = scale Q K^T and O = P V for all heads, as strided batched GEMMs, on the default stream. */
void qk_cublas(void *handle, const StdAttnArgs *a);
void pv_cublas(void *handle, const StdAttnArgs *a);

// ---- gpu.c ------------------------------------------------------------------------------------------------
/* Q, K, V, O (B H N d elements each) and S, P (B H N^2 each) in the storage type. */
size_t std_attn_device_bytes(const Options *o);
/* Host memory of the CPU run (cpu != 0: every array of the CPU version) or of the GPU run (inputs, staging,
 * the check's buffers). */
size_t std_attn_host_bytes(const Options *o, int cpu);
void std_attn_run_gpu(const Options *o, const DeviceInfo *dev, KernelRun *runs);
/* One forward pass for tests: uploads Q, K, V (every head), poisons S, P and O with NaN, runs the three
 * steps (gemm_of(o) picks own kernels or cuBLAS) and downloads S, P and O (every head, as float). With
 * counted != 0 the instrumented build runs wherever there is one (every own kernel; the softmax with cuBLAS)
 * and io[k], have_io[k] receive its bytes. */
void std_attn_forward_gpu(const Options *o, const float *Q, const float *K, const float *V, float *S, float *P,
                          float *O, int counted, IoBytes io[SA_KERNELS], int have_io[SA_KERNELS]);

#endif
