/* ptx.cuh: the PTX instructions chapter 06's kernels add to those of common/ptx_sm90.cuh (wgmma, its fences, the
 * proxy fence) and common/ptx_sm80.cuh (shared addresses, cp.async for step 1's copies, ex2), one small wrapper
 * each: the tensor memory accelerator's copy and the mbarrier it completes on (step 2's copies) and its store
 * (step 8); setmaxnreg (step 3); named barriers (step 4). The descriptors wgmma reads its shared operands through
 * are built in common/wgmma_layout.h, where the host's tests reach them too. */
#ifndef FA_CH06_PTX_CUH
#define FA_CH06_PTX_CUH

#include <stdio.h> /* printf, in a wait that gives up (MBAR_WAIT_LIMIT) */

#include <cuda.h> /* CUtensorMap (a type only: the program reaches the driver through the runtime, 2_tma.cu) */
#include <stdint.h>

#include "ptx_sm90.cuh"

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
 * thread commits into a group and waits on (bulk_commit, bulk_wait_read, bulk_wait: ptx_sm90.cuh). Elements outside
 * the tensor are not written. */
static __device__ __forceinline__ void tma_store_3d(const CUtensorMap *map, unsigned src, int x, int y, int z) {
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%1, %2, %3}], [%4];\n" ::"l"(
                     reinterpret_cast<uint64_t>(map)),
                 "r"(x), "r"(y), "r"(z), "r"(src)
                 : "memory");
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
