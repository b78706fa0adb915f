/* ptx.cuh: the PTX instructions chapter 06's kernels add to the tensor-core chapters' common ones (shared
 * addresses, cp.async for step 1's copies, ex2: common/ptx_sm80.cuh), one small wrapper each: wgmma (Hopper's
 * warpgroup matrix multiply-accumulate, sm_90a) and its fences; the tensor memory accelerator's copy and the
 * mbarrier it completes on (step 2's copies) and its store (step 8); setmaxnreg (step 3); named barriers (step 4).
 * The descriptors wgmma reads its shared operands through are built in tiles.h, where the host's tests reach them
 * too.
 *
 * wgmma. One wgmma.mma_async is issued by the 128 threads of a warpgroup together and multiplies a 64 x 16 tile of
 * A by a 16 x N tile of B into a 64 x N fp32 accumulator spread over the warpgroup's registers (N/2 floats a
 * thread), asynchronously: the instruction returns at once, and the results are there only after
 * wgmma.commit_group and wgmma.wait_group. The accumulator's layout (both products) is mma.sync's, one m16 tile
 * per warp: warp w holds rows 16 w .. 16 w + 15, and d[n][2 h + e] of a thread (lane = 4 frag_row + frag_col) is
 * row 16 w + frag_row + 8 h, column 8 n + 2 frag_col + e. A from registers (P of O += P V) is mma.sync's A
 * fragment of the same rows: 4 registers of two 16-bit values, rows frag_row / frag_row + 8, columns
 * 2 frag_col, +1 / 8 + 2 frag_col, +1. */
#ifndef FA_CH06_PTX_CUH
#define FA_CH06_PTX_CUH

#include <stdio.h> /* printf, in a wait that gives up (MBAR_WAIT_LIMIT) */

#include <cuda.h> /* CUtensorMap (a type only: the program reaches the driver through the runtime, 2_tma.cu) */
#include <cuda_bf16.h>
#include <stdint.h>

#include <type_traits>

#include "ptx_sm80.cuh"

/* ---- wgmma ------------------------------------------------------------------------------------------------ */

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

/* For the compiler, not the GPU: the accumulators are redefined here. After a wgmma_wait, so that no read of them
 * moves above it (the compiler does not know that wgmma writes them asynchronously); before a wgmma_fence, so
 * that every write the threads made to them (O rescaled by alpha) is in its registers before the batch the fence
 * opens, as CUTLASS fences its accumulators on both sides. (In this chapter's kernels the second changes no
 * instruction: a test of the machine code, not of the source, is what would tell.) */
template <int NT>
static __device__ __forceinline__ void wgmma_fence_operands(float (&d)[NT][4]) {
#pragma unroll
    for (int n = 0; n < NT; n++)
#pragma unroll
        for (int e = 0; e < 4; e++) asm volatile("" : "+f"(d[n][e])::"memory");
}

/* d (64 x N) = A B (+ d where accumulate != 0): S = Q_i K_j^T, one k16 step, N = Bc keys (64, or 128 in step 3).
 * A (64 x 16) and B (16 x N) in shared memory, both K-major (descriptors a, b; imm-trans-a = imm-trans-b = 0);
 * scale-a = scale-b = 1. */
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
/* The same 128 keys wide (step 3's Bc = 128). */
#define FA3_WGMMA_SS_M64N128K16(TYPE)                                                                                 \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"                                                         \
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32." TYPE "." TYPE " "                                     \
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                            \
                  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "                  \
                  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "                  \
                  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "                 \
                 "%64, %65, p, 1, 1, 0, 0;\n}\n"                                                                      \
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
                 : "l"(a), "l"(b), "r"(accumulate))
template <typename T, int N>
static __device__ __forceinline__ void wgmma_m64nNk16_ss(float (&d)[N / 8][4], uint64_t a, uint64_t b, int accumulate) {
    static_assert(N == 64 || N == 128, "S is 64 or 128 keys wide (Bc)");
    constexpr bool bf16 = std::is_same_v<T, __nv_bfloat16>;
    if constexpr (N == 64 && bf16)
        FA3_WGMMA_SS_M64N64K16("bf16");
    else if constexpr (N == 64)
        FA3_WGMMA_SS_M64N64K16("f16");
    else if constexpr (bf16)
        FA3_WGMMA_SS_M64N128K16("bf16");
    else
        FA3_WGMMA_SS_M64N128K16("f16");
}
#undef FA3_WGMMA_SS_M64N64K16
#undef FA3_WGMMA_SS_M64N128K16

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

/* ---- the tensor memory accelerator and its mbarriers (step 2) ----------------------------------------------- */

/* An mbarrier (8 bytes of shared memory at the shared address bar) expecting `count` arrivals per phase. */
static __device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

/* The initialised barriers visible to the copy engine (the async proxy) as well as to the other threads, once the
 * block's barrier that follows has passed. */
static __device__ __forceinline__ void mbar_init_fence() {
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

/* This thread's arrival, announcing `bytes` still to come from copies: the phase completes when every arrival is in
 * and the copies have delivered that many bytes. */
static __device__ __forceinline__ void mbar_arrive_expect_tx(unsigned bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}

/* Wait until the phase of parity `parity` has completed (the barrier's phases alternate 0, 1, 0, ...).
 * A phase that never completes (a wrong parity, a missing arrival, fewer bytes than announced) hangs the kernel.
 * Built with -DMBAR_WAIT_LIMIT=TRIES (make DEBUG_WAITS=1), a wait gives up after that many tries: it prints the
 * block, the thread, the barrier and the parity, and traps, so that a hang becomes an error that says where it
 * is. Without it (every build the book measures) the loop is the plain one. */
static __device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
    unsigned done;
#ifdef MBAR_WAIT_LIMIT
    long long tries = 0;
#endif
    do {
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                     "selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done)
                     : "r"(bar), "r"(parity)
                     : "memory");
#ifdef MBAR_WAIT_LIMIT
        if (!done && ++tries == (long long)(MBAR_WAIT_LIMIT)) {
            printf("mbar_wait: block %d thread %d: the phase of parity %u of the barrier at shared 0x%x not complete "
                   "after %lld tries\n", (int)blockIdx.x, (int)threadIdx.x, parity, bar, tries);
            __trap();
        }
#endif
    } while (!done);
}

/* This thread's arrival, with no bytes to announce (step 3: a consumer warp releasing a buffer it has read). */
static __device__ __forceinline__ void mbar_arrive(unsigned bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

/* The box of map at coordinates (x, y, z) (innermost first) into shared memory at dst, its bytes reported to the
 * mbarrier bar. Elements outside the tensor are written as zeros and not read. */
static __device__ __forceinline__ void tma_load_3d(unsigned dst, const CUtensorMap *map, int x, int y, int z,
                                                   unsigned bar) {
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes "
                 "[%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(dst),
                 "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(z), "r"(bar)
                 : "memory");
}

/* The box of map at coordinates (x, y, z) written from shared memory at src (step 8): a bulk copy the issuing
 * thread commits into a group (bulk_commit) and waits on: bulk_wait_read<N> until all but its N most recent groups
 * have read their shared memory (it may be written again), bulk_wait<N> until they have completed. Elements outside
 * the tensor are not written. */
static __device__ __forceinline__ void tma_store_3d(const CUtensorMap *map, unsigned src, int x, int y, int z) {
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%1, %2, %3}], [%4];\n" ::"l"(
                     reinterpret_cast<uint64_t>(map)),
                 "r"(x), "r"(y), "r"(z), "r"(src)
                 : "memory");
}
static __device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
template <int N>
static __device__ __forceinline__ void bulk_wait_read() {
    asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}
template <int N>
static __device__ __forceinline__ void bulk_wait() {
    asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(N) : "memory");
}

/* ---- warp specialization (step 3) ---------------------------------------------------------------------------- */

/* The registers of this warpgroup's threads lowered to, or raised to, REGS per thread (a multiple of 8, 24 .. 256),
 * all 128 threads together: the producer hands its registers back to the SM's pool, the consumers take them. A
 * raise waits until the pool has them. */
template <int REGS>
static __device__ __forceinline__ void setmaxnreg_dec() {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(REGS));
}
template <int REGS>
static __device__ __forceinline__ void setmaxnreg_inc() {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(REGS));
}

/* ---- named barriers (step 4) ------------------------------------------------------------------------------- */

/* Hardware barrier `id` of the block (16 of them; 0 is __syncthreads's) for `threads` threads, a multiple of 32:
 * bar.sync counts this warp in and waits until `threads` threads have been counted; bar.arrive counts this warp in
 * and goes on. The phase then starts over. Step 4's turns: FA3_PP_TURN + c is consumer c's. */
#define FA3_PP_TURN 1
static __device__ __forceinline__ void named_bar_sync(unsigned id, unsigned threads) {
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
static __device__ __forceinline__ void named_bar_arrive(unsigned id, unsigned threads) {
    asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

#endif
