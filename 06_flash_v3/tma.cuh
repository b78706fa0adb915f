/* tma.cuh: chapter 06's PTX for the tensor memory accelerator (sm_90): a tile copied from global to shared memory
 * by one thread's instruction, the copy engine doing the addressing, the bounds and the swizzle, and the mbarrier
 * on which the copies report their bytes and the threads wait. */
#ifndef FA_CH06_TMA_CUH
#define FA_CH06_TMA_CUH

#include <cuda.h> /* CUtensorMap (a type only: the program calls the driver through the runtime, tma.cu) */
#include <stdint.h>

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

/* Wait until the phase of parity `parity` has completed (the barrier's phases alternate 0, 1, 0, ...). */
static __device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
    unsigned done;
    do {
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                     "selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done)
                     : "r"(bar), "r"(parity)
                     : "memory");
    } while (!done);
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

#endif
