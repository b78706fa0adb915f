/* ptx_sm90.cuh: the PTX of Hopper's warpgroup matrix multiply-accumulate (wgmma, sm_90a), one small wrapper each:
 * the instruction in the forms the chapters use, its fences, commit and wait, and the proxy fence that makes the
 * threads' shared-memory writes visible to it. What a kernel does with them is its chapter's. The descriptors it
 * reads its shared operands through are built in wgmma_layout.h, where the host's tests reach them too.
 *
 * wgmma. One wgmma.mma_async is issued by the 128 threads of a warpgroup together and multiplies a 64 x 16 tile of
 * A by a 16 x N tile of B into a 64 x N fp32 accumulator spread over the warpgroup's registers (N/2 floats a
 * thread), asynchronously: the instruction returns at once, and the results are there only after
 * wgmma.commit_group and wgmma.wait_group. The accumulator's layout is mma.sync's, one m16 tile per warp: warp w
 * of the warpgroup holds rows 16 w .. 16 w + 15, and d[n][2 h + e] of a thread (lane = 4 frag_row + frag_col) is
 * row 16 w + frag_row + 8 h, column 8 n + 2 frag_col + e. A from registers is mma.sync's A fragment of the same
 * rows: 4 registers of two 16-bit values, rows frag_row / frag_row + 8, columns 2 frag_col, +1 / 8 + 2 frag_col,
 * +1 (ptx_sm80.cuh).
 *
 * Bulk copies. A cp.async.bulk (a box through a tensor map, or a plain run of bytes) is issued by one thread and
 * carried out by the SM's copy engine while the thread goes on; a copy out of shared memory joins the thread's
 * bulk group, which it commits and waits on; a copy into shared memory reports its bytes to an mbarrier, which the
 * threads that read them wait on.
 *
 * Warp specialization. setmaxnreg moves registers between warpgroups of different jobs, and named barriers let some
 * of a block's warps meet without the others. */
#ifndef FA_PTX_SM90_CUH
#define FA_PTX_SM90_CUH

#include <cuda.h> /* CUtensorMap (a type only: a program reaches the driver's encoder through the runtime) */
#include <cuda_bf16.h>
#include <stdint.h>
#include <stdio.h> /* printf, in a wait that gives up (MBAR_WAIT_LIMIT) */

#include <type_traits>

#include "ptx_sm80.cuh"

/* Before a batch of wgmma: this warp's earlier accesses to the registers the batch reads or writes (accumulators
 * rescaled, A fragments just packed) are ordered before it. */
static __device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }

/* The wgmma issued since the last commit form one group. */
static __device__ __forceinline__ void wgmma_commit() {
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

/* Wait until at most PENDING groups of this warp are still running (0: all done, accumulators final); the groups
 * complete in the order they were committed. */
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
 * that every write the threads made to them (a rescaling) is in its registers before the batch the fence opens,
 * as CUTLASS fences its accumulators on both sides. (In the book's kernels the second changes no instruction: a
 * test of the machine code, not of the source, is what would tell.) */
template <int NT>
static __device__ __forceinline__ void wgmma_fence_operands(float (&d)[NT][4]) {
#pragma unroll
    for (int n = 0; n < NT; n++)
#pragma unroll
        for (int e = 0; e < 4; e++) asm volatile("" : "+f"(d[n][e])::"memory");
}

/* The operands of a 64 x N accumulator, N/2 floats a thread: d[n][0..3] for the N/8 groups of 8 columns. */
#define WGMMA_D4(n) "+f"(d[n][0]), "+f"(d[n][1]), "+f"(d[n][2]), "+f"(d[n][3])
#define WGMMA_D32 WGMMA_D4(0), WGMMA_D4(1), WGMMA_D4(2), WGMMA_D4(3)
#define WGMMA_D64 WGMMA_D32, WGMMA_D4(4), WGMMA_D4(5), WGMMA_D4(6), WGMMA_D4(7)
#define WGMMA_D128 WGMMA_D64, WGMMA_D4(8), WGMMA_D4(9), WGMMA_D4(10), WGMMA_D4(11), WGMMA_D4(12), WGMMA_D4(13), \
                   WGMMA_D4(14), WGMMA_D4(15)
#define WGMMA_R32 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}"
#define WGMMA_R64 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                         \
                  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define WGMMA_R128 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                        \
                   "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "                 \
                   "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "                 \
                   "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}"

/* d (64 x N) = A B (+ d where accumulate != 0), one k16 step. A (64 x 16) and B (16 x N) both in shared memory
 * (descriptors a, b), scale-a = scale-b = 1. TRANS is imm-trans-a, imm-trans-b: "0, 0" reads both K-major (k along
 * the rows of both tiles: S = Q_i K_j^T, the features being k), "1, 1" both MN-major (k down the rows of both).
 * A, B, P: the operand numbers of a, b and accumulate, after the N/2 accumulators. */
#define WGMMA_SS(TYPE, N, TRANS, R, A, B, P, D)                                                                      \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " P ", 0;\n"                                                       \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TYPE "." TYPE " " R ", " A ", " B ", p, 1, 1, "    \
                 TRANS ";\n}\n"                                                                                       \
                 : D                                                                                                  \
                 : "l"(a), "l"(b), "r"(accumulate))
#define WGMMA_SS_N(TYPE, N, TRANS)                                                                                   \
    if constexpr (N == 32) WGMMA_SS(TYPE, 32, TRANS, WGMMA_R32, "%16", "%17", "%18", WGMMA_D32);                   \
    else if constexpr (N == 64) WGMMA_SS(TYPE, 64, TRANS, WGMMA_R64, "%32", "%33", "%34", WGMMA_D64);              \
    else WGMMA_SS(TYPE, 128, TRANS, WGMMA_R128, "%64", "%65", "%66", WGMMA_D128)

/* Both operands K-major: S = Q_i K_j^T (N = the keys) or S_ij^T = K_j Q_i^T (N = the queries). */
template <typename T, int N>
static __device__ __forceinline__ void wgmma_m64nNk16_ss(float (&d)[N / 8][4], uint64_t a, uint64_t b, int accumulate) {
    static_assert(N == 64 || N == 128, "64 or 128 columns");
    if constexpr (std::is_same_v<T, __nv_bfloat16>) {
        WGMMA_SS_N("bf16", N, "0, 0");
    } else {
        WGMMA_SS_N("f16", N, "0, 0");
    }
}

/* Both operands MN-major, read transposed: dQ_i = dS_ij K_j from dS_ij^T and K_j stored with the keys (k) down their
 * rows; N = 32 or 64 of the features. */
template <typename T, int N>
static __device__ __forceinline__ void wgmma_m64nNk16_ss_tt(float (&d)[N / 8][4], uint64_t a, uint64_t b,
                                                           int accumulate) {
    static_assert(N == 32 || N == 64, "32 or 64 columns");
    if constexpr (std::is_same_v<T, __nv_bfloat16>) {
        WGMMA_SS_N("bf16", N, "1, 1");
    } else {
        WGMMA_SS_N("f16", N, "1, 1");
    }
}
#undef WGMMA_SS_N
#undef WGMMA_SS

/* d (64 x N) += A B, one k16 step. A (64 x 16) from registers (a: this thread's fragment), B (16 x N) in shared
 * memory MN-major (descriptor b, imm-trans-b = 1: B's rows k are the tile's rows): O_i += P_ij V_j (the keys are
 * k), dV_j += P_ij^T dO_i (the queries). N = 64 or 128 (the features). */
#define WGMMA_RS(TYPE, N, R, A, B, D)                                                                                \
    asm volatile("wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TYPE "." TYPE " " R ", " A ", " B                  \
                 ", 1, 1, 1, 1;\n"                                                                                    \
                 : D                                                                                                  \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b))
#define WGMMA_RS_N(TYPE, N)                                                                                          \
    if constexpr (N == 64) WGMMA_RS(TYPE, 64, WGMMA_R64, "{%32, %33, %34, %35}", "%36", WGMMA_D64);                 \
    else WGMMA_RS(TYPE, 128, WGMMA_R128, "{%64, %65, %66, %67}", "%68", WGMMA_D128)
template <typename T, int N>
static __device__ __forceinline__ void wgmma_m64nNk16_rs(float (&d)[N / 8][4], const uint32_t (&a)[4], uint64_t b) {
    static_assert(N == 64 || N == 128, "64 or 128 columns");
    if constexpr (std::is_same_v<T, __nv_bfloat16>) {
        WGMMA_RS_N("bf16", N);
    } else {
        WGMMA_RS_N("f16", N);
    }
}
#undef WGMMA_RS_N
#undef WGMMA_RS
#undef WGMMA_D4
#undef WGMMA_D32
#undef WGMMA_D64
#undef WGMMA_D128
#undef WGMMA_R32
#undef WGMMA_R64
#undef WGMMA_R128

/* ---- stmatrix ------------------------------------------------------------------------------------------------
 * Four 8 x 8 matrices of 16-bit elements to shared memory, ldmatrix_x4's inverse (ptx_sm80.cuh): lane l gives the
 * address of row l % 8 of matrix l / 8; register j holds, in every lane, row frag_row and columns 2 frag_col, +1 of
 * matrix j (an mma.sync accumulator's layout, packed to pairs). sm_90 on. */
static __device__ __forceinline__ void stmatrix_x4(unsigned addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(r0), "r"(r1),
                 "r"(r2), "r"(r3)
                 : "memory");
}

/* ---- bulk copies out of shared memory --------------------------------------------------------------------------
 * The copies this thread issued since its last commit form one bulk group. bulk_wait_read<N>: until all but its N
 * most recent groups have read their shared memory (which may then be written again); bulk_wait<N>: until they have
 * completed, their writes done. */
static __device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
template <int N>
static __device__ __forceinline__ void bulk_wait_read() {
    asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}
template <int N>
static __device__ __forceinline__ void bulk_wait() {
    asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(N) : "memory");
}

/* True in one lane of the warp, the same for every call (elect.sync over the full warp): where one thread issues
 * what the warp decided together, a bulk copy, its operands warp-uniform. */
static __device__ __forceinline__ bool elect_one() {
    unsigned one;
    asm volatile("{\n.reg .pred p;\nelect.sync _|p, 0xffffffff;\nselp.u32 %0, 1, 0, p;\n}\n" : "=r"(one));
    return one != 0;
}

/* dst[k] += src[k] for the bytes / 4 floats at src in shared memory, by the copy engine: an fp32 add in L2 per
 * element, as atomicAdd's (other blocks may add into the same floats). dst and src 16-byte aligned, bytes a multiple
 * of 16; src written through the generic proxy is made visible first (fence_proxy_async, then a barrier where other
 * threads wrote it). Joins this thread's bulk group. */
static __device__ __forceinline__ void bulk_reduce_add_f32(float *dst, unsigned src, unsigned bytes) {
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;\n" ::"l"(dst), "r"(src),
                 "r"(bytes)
                 : "memory");
}

/* ---- the tensor memory accelerator and its mbarriers ----------------------------------------------------------- */

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

/* This thread's arrival, with no bytes to announce (a consumer releasing a buffer it has read). It releases this
 * thread's own earlier accesses: where other threads read the buffer too, each arrives, or a barrier among them
 * orders their reads before this one. */
static __device__ __forceinline__ void mbar_arrive(unsigned bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

/* This thread's arrival on the mbarrier bar once every cp.async it has issued so far has landed (sm_80's copies
 * reporting to an mbarrier, as the copy engine's do); .noinc: the arrival is one of the `count` the barrier was
 * initialised with. The thread goes on at once. */
static __device__ __forceinline__ void cp_async_mbar_arrive(unsigned bar) {
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
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

/* The box of map at coordinates (x, y, z) written from shared memory at src: a bulk copy the issuing
 * thread commits into a group and waits on (bulk_commit, bulk_wait_read, bulk_wait: above). Elements outside the
 * tensor are not written. */
static __device__ __forceinline__ void tma_store_3d(const CUtensorMap *map, unsigned src, int x, int y, int z) {
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%1, %2, %3}], [%4];\n" ::"l"(
                     reinterpret_cast<uint64_t>(map)),
                 "r"(x), "r"(y), "r"(z), "r"(src)
                 : "memory");
}

/* ---- warp specialization --------------------------------------------------------------------------------------- */

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

/* ---- named barriers -------------------------------------------------------------------------------------------- */

/* Hardware barrier `id` of the block (16 of them; 0 is __syncthreads's) for `threads` threads, a multiple of 32:
 * bar.sync counts this warp in and waits until `threads` threads have been counted; bar.arrive counts this warp in
 * and goes on. The phase then starts over. */
static __device__ __forceinline__ void named_bar_sync(unsigned id, unsigned threads) {
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
static __device__ __forceinline__ void named_bar_arrive(unsigned id, unsigned threads) {
    asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
/* barrier.sync without .aligned (bar.sync is barrier.sync.aligned, which PTX allows only where every thread that
 * meets the barrier meets it at the same instruction): for a barrier that two groups of warps wait on, each at its own
 * place in the code. Counts and waits as bar.sync does. */
static __device__ __forceinline__ void named_bar_sync_unaligned(unsigned id, unsigned threads) {
    asm volatile("barrier.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

#endif
