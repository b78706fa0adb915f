/* storage16.cuh: what the kernels that store fp16 or bf16 share on the device: the constants of the log2-unit
 * softmax and the packing of two floats into one register of 16-bit elements. */
#ifndef FA_STORAGE16_CUH
#define FA_STORAGE16_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include <type_traits>

static constexpr float LOG2E = 1.4426950408889634f;
static constexpr float LN2 = 0.6931471805599453f;

/* Two floats as two 16-bit elements of T (fp16 or bf16) in one register, the lower address in the low half: the
 * layout of a pair in memory and of a pair in an mma operand register. */
template <typename T>
static __device__ __forceinline__ uint32_t pack2(float lo, float hi) {
    if constexpr (std::is_same_v<T, __nv_bfloat16>) {
        const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
        return *reinterpret_cast<const uint32_t *>(&v);
    } else {
        const __half2 v = __floats2half2_rn(lo, hi);
        return *reinterpret_cast<const uint32_t *>(&v);
    }
}

#endif
