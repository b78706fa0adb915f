/* kernels.h: chapter 00's launchers (kernels.cu). Each exists twice: the timed build (plain name) and the
 * instrumented build that counts global-memory bytes (_counted; see common/io_tally.cuh). */
#ifndef FA_CH00_KERNELS_H
#define FA_CH00_KERNELS_H

#include <stddef.h>
#include "device.h" /* KernelResources */

#ifdef __cplusplus
extern "C" {
#endif

/* Every array lives in device memory, [B, H, rows, cols] row-major, as float (fp16 == 0) or as IEEE half
 * (fp16 != 0). Arithmetic is float in both cases. */
typedef struct {
    const void *Q, *K, *V; /* [B, H, N, d]                                  */
    void *S;               /* [B, H, N, N]  S = scale Q K^T, scale = 1/sqrt(d) */
    void *P;               /* [B, H, N, N]  P = softmax(S), row by row       */
    void *O;               /* [B, H, N, d]  O = P V                          */
    int B, H, N, d;
    int fp16;
} StdAttnArgs;

enum { SA_QK, SA_SOFTMAX, SA_PV, SA_KERNELS }; /* the three kernels, in launch order */

/* S = scale Q K^T (qk_gemm_kernel): grid (ceil(N / QK_BR), B*H). */
void qk_gemm_launch(const StdAttnArgs *a);
void qk_gemm_launch_counted(const StdAttnArgs *a);

/* P = softmax(S) row by row: N <= SOFTMAX_WARP_MAX_N (tiles.h): softmax_warp_kernel, one warp per row, grid
 * (ceil(N / SOFTMAX_WARP_ROWS), B*H); longer rows: softmax_kernel, one block per row, grid (N, B*H). */
void softmax_launch(const StdAttnArgs *a);
void softmax_launch_counted(const StdAttnArgs *a);

/* O = P V (pv_gemm_kernel): grid (ceil(N / PV_BR(d)), B*H). */
void pv_gemm_launch(const StdAttnArgs *a);
void pv_gemm_launch_counted(const StdAttnArgs *a);

/* Resources of kernel `which` (SA_QK, SA_SOFTMAX or SA_PV) for this d, storage type and N. */
void std_attn_resources(int which, int d, int fp16, int N, KernelResources *r);
void std_attn_resources_counted(int which, int d, int fp16, int N, KernelResources *r);

#ifdef __cplusplus
}
#endif
#endif
