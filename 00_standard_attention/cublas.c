/* cublas.c: the two GEMMs of chapter 00 through cuBLAS (--gemm cublas), to show that even the vendor's GEMM
 * leaves the three-kernel algorithm bound by the N x N matrices it writes and reads.
 *
 * cuBLAS is column-major; our arrays are row-major. A row-major r x c matrix is the column-major c x r
 * matrix of the same bytes (its transpose), so per head:
 *   S = scale Q K^T   row-major N x N  ==  column-major S^T = K Q^T, with K^T and Q^T (d x N) as stored:
 *                     op(A) = (K^T)^T (transa = T, lda = d), op(B) = Q^T (transb = N, ldb = d), ldc = N
 *   O = P V           row-major N x d  ==  column-major O^T = V^T P^T, both as stored:
 *                     A = V^T (d x N, lda = d), B = P^T (N x N, ldb = N), ldc = d
 * fp32: cublasSgemmStridedBatched (FFMA: cuBLAS uses TF32 tensor cores only when asked to, and we do not).
 * fp16: cublasGemmStridedBatchedEx with half inputs and outputs and CUBLAS_COMPUTE_32F (tensor cores,
 * float accumulation). One batch entry per head; alpha = scale for Q K^T. */
#include <cublas_v2.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ch00.h"
#include "cuda_check.h"

#define CUBLAS_CHECK(call)                                                                           \
    do {                                                                                             \
        cublasStatus_t st_ = (call);                                                                 \
        if (st_ != CUBLAS_STATUS_SUCCESS) {                                                          \
            fprintf(stderr, "cuBLAS error at %s:%d: %s\n  in: %s\n", __FILE__, __LINE__,              \
                    cublasGetStatusString(st_), #call);                                              \
            exit(3);                                                                                 \
        }                                                                                            \
    } while (0)

void *cublas_gemms_create(void) {
    cublasHandle_t handle;
    CUBLAS_CHECK(cublasCreate(&handle));
    return handle;
}

void cublas_gemms_destroy(void *handle) { CUBLAS_CHECK(cublasDestroy((cublasHandle_t)handle)); }

/* C (m x n, column-major, ldc) = alpha op(A) op(B), one batch entry per head, in the storage type. */
static void gemm(void *handle, const StdAttnArgs *a, cublasOperation_t transa, int m, int n, int k, float alpha,
                 const void *A, int lda, long long strideA, const void *B, int ldb, long long strideB, void *C,
                 int ldc, long long strideC) {
    const float beta = 0.f;
    const int batch = a->B * a->H;
    if (a->fp16)
        CUBLAS_CHECK(cublasGemmStridedBatchedEx((cublasHandle_t)handle, transa, CUBLAS_OP_N, m, n, k, &alpha, A,
                                                CUDA_R_16F, lda, strideA, B, CUDA_R_16F, ldb, strideB, &beta, C,
                                                CUDA_R_16F, ldc, strideC, batch, CUBLAS_COMPUTE_32F,
                                                CUBLAS_GEMM_DEFAULT));
    else
        CUBLAS_CHECK(cublasSgemmStridedBatched((cublasHandle_t)handle, transa, CUBLAS_OP_N, m, n, k, &alpha,
                                               (const float *)A, lda, strideA, (const float *)B, ldb, strideB,
                                               &beta, (float *)C, ldc, strideC, batch));
    KERNEL_CHECK();
}

void qk_cublas(void *handle, const StdAttnArgs *a) {
    const long long Nd = (long long)a->N * a->d, NN = (long long)a->N * a->N;
    gemm(handle, a, CUBLAS_OP_T, a->N, a->N, a->d, 1.f / sqrtf((float)a->d), a->K, a->d, Nd, a->Q, a->d, Nd, a->S,
         a->N, NN);
}

void pv_cublas(void *handle, const StdAttnArgs *a) {
    const long long Nd = (long long)a->N * a->d, NN = (long long)a->N * a->N;
    gemm(handle, a, CUBLAS_OP_N, a->d, a->N, a->N, 1.f, a->V, a->d, Nd, a->P, a->N, NN, a->O, a->d, Nd);
}
