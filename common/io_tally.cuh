/* io_tally.cuh: the "counted" column of the book's IO tables.
 *
 * Each .cu file of a chapter (kernels.cu, and any other) is compiled twice. The timed build defines nothing
 * and every macro below is the bare memory access, so timing carries no counting cost. The instrumented build
 * (-DCOUNT_IO) tallies, per thread, the size of every load and store the kernel's code issues to global memory,
 * and adds the tallies into two device counters when the thread finishes. The host reads them with
 * io_counter_read().
 *
 *   IO_TALLY;                         at the top of a kernel (declares the per-thread tallies)
 *   float x = IO_LOAD(Q[i]);          a counted global load  (sizeof(Q[i]) bytes)
 *   IO_STORE(O[i], acc);              a counted global store (sizeof(O[i]) bytes)
 *   IO_STORE_V4(p, v);                a counted 16-byte store of the uint4 v at p, always one vector instruction
 *                                     (an assignment of a uint4 built from four values can be split into four
 *                                     4-byte stores, each touching every sector of the warp's span)
 *   IO_ATOMIC_ADD(&dQ[i], x);         a counted fp32 atomic add whose result is unused (sizeof(dQ[i]) bytes,
 *                                     written: a reduction sends its 4 bytes to L2 as a store does; ncu counts
 *                                     it under op_red)
 *   IO_TALLY_FLUSH();                 once, on every path out of the kernel
 *
 * The tallies are local variables of the kernel: a __device__ helper that loads or stores either receives
 * them by reference or opens its own IO_TALLY and flushes it before returning.
 *
 * Launcher names pass through IO_VARIANT(name), which appends _counted in the instrumented build, so both
 * builds link into one program. A chapter may have several .cu files, each built both ways: every
 * instrumented translation unit has its own device counters (a __device__ variable is private to its file
 * without relocatable device code) and registers them with the host when the program starts
 * (io_counter_register); io_counter_reset() and io_counter_read() (common/io_tally.c) act on all of them. */
#ifndef FA_IO_TALLY_CUH
#define FA_IO_TALLY_CUH

#include "cuda_check.h"
#include "io_bytes.h"

#ifdef COUNT_IO

static __device__ unsigned long long io_counted_bytes[2]; /* [0] read, [1] write */

#define IO_VARIANT(name) name##_counted
#define IO_TALLY unsigned long long io_read_ = 0, io_write_ = 0
#define IO_LOAD(x) (io_read_ += sizeof(x), (x))
#define IO_STORE(dst, value) (io_write_ += sizeof(dst), (dst) = (value))
#define IO_STORE_V4(p, v) (io_write_ += sizeof(uint4), __stwb((p), (v)))
#define IO_ATOMIC_ADD(p, v) (io_write_ += sizeof(*(p)), (void)atomicAdd((p), (v)))
#define IO_TALLY_FLUSH()                                                                             \
    do {                                                                                             \
        if (io_read_) atomicAdd(&io_counted_bytes[0], io_read_);                                     \
        if (io_write_) atomicAdd(&io_counted_bytes[1], io_write_);                                   \
    } while (0)

static void io_counter_reset_here(void) {
    const unsigned long long zero[2] = {0, 0};
    CUDA_CHECK(cudaMemcpyToSymbol(io_counted_bytes, zero, sizeof(zero)));
}

static IoBytes io_counter_read_here(void) {
    unsigned long long b[2];
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpyFromSymbol(b, io_counted_bytes, sizeof(b)));
    return io_bytes(b[0], b[1]);
}

extern "C" int io_counter_register(void (*reset)(void), IoBytes (*read)(void));
/* This file's counters join the program's before main() runs. */
static const int io_counter_registered_ = io_counter_register(io_counter_reset_here, io_counter_read_here);

#else

#define IO_VARIANT(name) name
#define IO_TALLY
#define IO_LOAD(x) (x)
#define IO_STORE(dst, value) ((dst) = (value))
#define IO_STORE_V4(p, v) __stwb((p), (v))
#define IO_ATOMIC_ADD(p, v) ((void)atomicAdd((p), (v)))
#define IO_TALLY_FLUSH()                                                                             \
    do {                                                                                             \
    } while (0)

#endif

#ifdef __cplusplus
extern "C" {
#endif
/* Every registered counter (common/io_tally.c): zeroed, or summed. Without an instrumented translation unit in
 * the program they do nothing and read zero. */
void io_counter_reset(void);
IoBytes io_counter_read(void);
#ifdef __cplusplus
}
#endif

#endif
