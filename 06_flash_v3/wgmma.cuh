/* wgmma.cuh: chapter 06's PTX, Hopper's warpgroup matrix multiply-accumulate (sm_90a) in the two forms the
 * kernel uses, and the fences around it. One wgmma.mma_async is issued by the 128 threads of a warpgroup together
 * and multiplies a 64 x 16 tile of A by a 16 x N tile of B into a 64 x N fp32 accumulator spread over the
 * warpgroup's registers (N/2 floats a thread), asynchronously: the instruction returns at once, and the results
 * are there only after wgmma.commit_group and wgmma.wait_group.
 *
 * The accumulator's layout (both products) is mma.sync's, one m16 tile per warp: warp w holds rows
 * 16 w .. 16 w + 15, and d[n][2 h + e] of a thread (lane = 4 g + t) is row 16 w + g + 8 h, column 8 n + 2 t + e.
 * A from registers (P of O += P V) is mma.sync's A fragment of the same rows: 4 registers of two 16-bit values,
 * rows g / g + 8, columns 2t, 2t + 1 / 8 + 2t, 9 + 2t. Operands in shared memory are given by descriptors
 * (tiles.h). */
#ifndef FA_CH06_WGMMA_CUH
#define FA_CH06_WGMMA_CUH

#include <cuda_bf16.h>
#include <stdint.h>

#include <type_traits>

/* Before a batch of wgmma: this warp's earlier accesses to the registers the batch reads or writes (the
 * accumulators rescaled by alpha, the A fragments just packed) are ordered before it. */
static __device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }

/* The wgmma issued since the last commit form one group. */
static __device__ __forceinline__ void wgmma_commit() {
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

/* Wait until at most PENDING groups of this warp are still running (0: all done, accumulators final). */
template <int PENDING>
static __device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(PENDING) : "memory");
}

/* Shared memory written through the generic proxy (cp.async, ordinary stores) is read by wgmma through the async
 * proxy: each writing thread makes its writes visible to the async proxy with this fence, before the barrier
 * after which the warpgroup reads them. */
static __device__ __forceinline__ void fence_proxy_async() {
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

/* For the compiler, not the GPU: the accumulators are redefined here, so that no read of them moves above the
 * wgmma_wait before it (the compiler does not know that wgmma writes them asynchronously). */
template <int NT>
static __device__ __forceinline__ void wgmma_fence_operands(float (&d)[NT][4]) {
#pragma unroll
    for (int n = 0; n < NT; n++)
#pragma unroll
        for (int e = 0; e < 4; e++) asm volatile("" : "+f"(d[n][e])::"memory");
}

/* d (64 x 64) = A B (+ d where accumulate != 0): S = Q_i K_j^T, one k16 step. A (64 x 16) and B (16 x 64) in
 * shared memory, both K-major (descriptors a, b; imm-trans-a = imm-trans-b = 0); scale-a = scale-b = 1. */
#define FA3_WGMMA_SS_M64N64K16(TYPE)                                                                                  \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"                                                         \
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPE "." TYPE " "                                      \
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                            \
                  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "                 \
                 "%32, %33, p, 1, 1, 0, 0;\n}\n"                                                                      \
                 : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]),                                        \
                   "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]),                                        \
                   "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]),                                        \
                   "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]),                                        \
                   "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]),                                        \
                   "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]),                                        \
                   "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]),                                        \
                   "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3])                                         \
                 : "l"(a), "l"(b), "r"(accumulate))
template <typename T>
static __device__ __forceinline__ void wgmma_m64n64k16_ss(float (&d)[8][4], uint64_t a, uint64_t b, int accumulate) {
    if constexpr (std::is_same_v<T, __nv_bfloat16>)
        FA3_WGMMA_SS_M64N64K16("bf16");
    else
        FA3_WGMMA_SS_M64N64K16("f16");
}
#undef FA3_WGMMA_SS_M64N64K16

/* d (64 x N) += A B: O_i += P_ij V_j, one k16 step. A (64 x 16) from registers (a: this thread's fragment),
 * B (16 x N) in shared memory MN-major (descriptor b, imm-trans-b = 1: B's rows, the keys, are the tile's rows).
 * N = d: 64 or 128. */
#define FA3_WGMMA_RS_M64N64K16(TYPE)                                                                                  \
    asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPE "." TYPE " "                                      \
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                            \
                  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "                 \
                 "{%32, %33, %34, %35}, %36, 1, 1, 1, 1;\n"                                                           \
                 : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]),                                        \
                   "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]),                                        \
                   "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]),                                        \
                   "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]),                                        \
                   "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]),                                        \
                   "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]),                                        \
                   "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]),                                        \
                   "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3])                                         \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b))
#define FA3_WGMMA_RS_M64N128K16(TYPE)                                                                                 \
    asm volatile("wgmma.mma_async.sync.aligned.m64n128k16.f32." TYPE "." TYPE " "                                     \
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                            \
                  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "                  \
                  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "                  \
                  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "                 \
                 "{%64, %65, %66, %67}, %68, 1, 1, 1, 1;\n"                                                           \
                 : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]),                                        \
                   "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]),                                        \
                   "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]),                                        \
                   "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]),                                        \
                   "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]),                                        \
                   "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]),                                        \
                   "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]),                                        \
                   "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3]),                                        \
                   "+f"(d[8][0]), "+f"(d[8][1]), "+f"(d[8][2]), "+f"(d[8][3]),                                        \
                   "+f"(d[9][0]), "+f"(d[9][1]), "+f"(d[9][2]), "+f"(d[9][3]),                                        \
                   "+f"(d[10][0]), "+f"(d[10][1]), "+f"(d[10][2]), "+f"(d[10][3]),                                    \
                   "+f"(d[11][0]), "+f"(d[11][1]), "+f"(d[11][2]), "+f"(d[11][3]),                                    \
                   "+f"(d[12][0]), "+f"(d[12][1]), "+f"(d[12][2]), "+f"(d[12][3]),                                    \
                   "+f"(d[13][0]), "+f"(d[13][1]), "+f"(d[13][2]), "+f"(d[13][3]),                                    \
                   "+f"(d[14][0]), "+f"(d[14][1]), "+f"(d[14][2]), "+f"(d[14][3]),                                    \
                   "+f"(d[15][0]), "+f"(d[15][1]), "+f"(d[15][2]), "+f"(d[15][3])                                     \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b))
template <typename T, int N>
static __device__ __forceinline__ void wgmma_m64nNk16_rs(float (&d)[N / 8][4], const uint32_t (&a)[4], uint64_t b) {
    static_assert(N == 64 || N == 128, "O is 64 or 128 columns wide (d)");
    constexpr bool bf16 = std::is_same_v<T, __nv_bfloat16>;
    if constexpr (N == 64 && bf16)
        FA3_WGMMA_RS_M64N64K16("bf16");
    else if constexpr (N == 64)
        FA3_WGMMA_RS_M64N64K16("f16");
    else if constexpr (bf16)
        FA3_WGMMA_RS_M64N128K16("bf16");
    else
        FA3_WGMMA_RS_M64N128K16("f16");
}
#undef FA3_WGMMA_RS_M64N64K16
#undef FA3_WGMMA_RS_M64N128K16

#endif
