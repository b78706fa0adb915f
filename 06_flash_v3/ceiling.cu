/* ceiling.cu: what wgmma itself reaches on this GPU, the compute roof of chapter 06 (chapter.c's roof): every SM
 * full of warpgroups that issue nothing but the products the kernels issue, wgmma.mma_async.m64n128k16 with
 * fp16 inputs from shared memory and fp32 accumulators, groups of 4 (64 features) kept in flight two at a time.
 * No copies, no softmax, no waits but wgmma's own: no attention kernel of the chapter can go faster. Measured once
 * per GPU and cached with the other ceilings (device_chapter_ceiling, common/device.c). */
#include <cuda_fp16.h>
#include <stdint.h>

#include "cuda_check.h"
#include "device.h"
#include "kernels.h"
#include "ptx.cuh"
#include "tiles.h"
#include "timing.h"

#ifndef COUNT_IO /* one copy in the program: the instrumented build of this file has nothing to count, and is empty */

#define CEILING_N 128       /* the products' N: Bc of S, d of O at d = 128 */
#define CEILING_ITERS 4096  /* groups per warpgroup                          */
#define CEILING_BLOCKS_PER_SM 4 /* one warpgroup each: 4 per SM, 24 KB of shared memory and ~90 registers each */

/* One warpgroup: A (64 rows x 64 features) and B (CEILING_N rows x 64 features) in shared memory, zeros (their values
 * do not change the rate), in the layout the chapter's descriptors read; CEILING_ITERS groups of 4 wgmma (k16 steps
 * 0..3) into one accumulator, each group committed and waited for with one still in flight. out: written only if
 * the accumulator takes an impossible value, so that the compiler keeps the loop. */
static __global__ void __launch_bounds__(128) wgmma_ceiling_kernel(float *out) {
    extern __shared__ __align__(1024) uint4 smem[];
    constexpr int TILE_A = 64 * 64 * 2, TILE_B = CEILING_N * 64 * 2; /* bytes */
    for (int x = threadIdx.x; x < (TILE_A + TILE_B) / 16; x += blockDim.x) smem[x] = make_uint4(0, 0, 0, 0);
    fence_proxy_async(); /* the zeros, written by the threads, visible to wgmma's reads */
    __syncthreads();     /* ... and every thread's zeros written before any product */
    const unsigned A = smem_addr(smem), B = A + TILE_A;
    float acc[CEILING_N / 8][4];
#pragma unroll
    for (int n = 0; n < CEILING_N / 8; n++) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.f;
    for (int it = 0; it < CEILING_ITERS; it++) {
        wgmma_fence_operands(acc);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < 4; kk++)
            wgmma_m64nNk16_ss<__half, CEILING_N>(acc, wgmma_desc_k_major(A, 64, kk), wgmma_desc_k_major(B, CEILING_N, kk), 1);
        wgmma_commit();
        wgmma_wait<1>(); /* the group before this one is done: two groups in flight */
    }
    wgmma_wait<0>();
    wgmma_fence_operands(acc);
    if (acc[0][0] == 12345.f) out[threadIdx.x] = acc[CEILING_N / 8 - 1][3];
}

typedef struct {
    float *out;
    int blocks;
} CeilingArgs;

static void launch_ceiling(void *p) {
    const CeilingArgs *a = (const CeilingArgs *)p;
    wgmma_ceiling_kernel<<<a->blocks, 128, (64 + CEILING_N) * 64 * 2>>>(a->out);
    KERNEL_CHECK();
}

/* The median of 20 launches after 150 (about 2 ms each on an H200: a third of a second at full clock, the warm-up the
 * other ceilings take, common/ceilings.cu). */
extern "C" double fa3_measure_wgmma_tflops(const DeviceInfo *info) {
    float *out;
    CUDA_CHECK(cudaMalloc(&out, 128 * sizeof(float)));
    CeilingArgs a = {out, info->sms * CEILING_BLOCKS_PER_SM};
    const Timing t = time_launches(launch_ceiling, &a, 150, 20, 0);
    CUDA_CHECK(cudaFree(out));
    const double flops = 2.0 * 64 * CEILING_N * 16 * 4 * (double)CEILING_ITERS * a.blocks;
    return flops / (t.median_ms * 1e-3) / 1e12;
}
#endif
