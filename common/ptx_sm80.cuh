/* ptx_sm80.cuh: the PTX instructions the tensor-core chapters wrap, one small wrapper each: shared-memory
 * addresses, mma.sync (m16n8k16, with its k-halves on sm_75; with or without an accumulator in), ldmatrix,
 * cp.async (sm_80 on) and ex2. What a kernel does with them is its chapter's; these say only how each instruction
 * is spelled.
 *
 * The m16n8k16 fragments (PTX ISA, "Matrix fragments for mma.m16n8k16"). A lane of a warp is
 * lane = 4 frag_row + frag_col, frag_row = lane / 4 (0-7), frag_col = lane % 4 (0-3); the 4 lanes of one frag_row
 * are a quad. Every lane holds, of a 16 x 8 tile of fp32 accumulators (S_ij or O_i, say) and of a 16 x 16 A operand
 * (Q_i or P_ij: 16-bit pairs):
 *
 *   accumulator c0..c3 (16 x 8)                      A operand a0..a3 (16 x 16), two 16-bit values each
 *   c0, c1 = row frag_row,     columns 2 frag_col, +1     a0 = row frag_row,     columns 2 frag_col, +1
 *   c2, c3 = row frag_row + 8, columns 2 frag_col, +1     a1 = row frag_row + 8, columns 2 frag_col, +1
 *                                                         a2 = row frag_row,     columns 8 + 2 frag_col, +1
 *                                                         a3 = row frag_row + 8, columns 8 + 2 frag_col, +1
 *
 * and of a 16 x 8 B operand (K_j^T or V_j) two registers b0, b1: rows (k) 2 frag_col, +1 and 8 + 2 frag_col, +1
 * of column (n) frag_row. ldmatrix fills these layouts from shared memory: without .trans, lane 4 r + c receives
 * row r, columns 2 c, +1 of an 8 x 8 matrix; with .trans, rows 2 c, +1 of column r (the transpose's row r). */
#ifndef FA_PTX_SM80_CUH
#define FA_PTX_SM80_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include <type_traits>

static __device__ __forceinline__ unsigned smem_addr(const void *p) {
    return (unsigned)__cvta_generic_to_shared(p);
}

/* c += A (16 x 16, 4 registers) B (16 x 8, 2 registers), fp32 accumulators, for the storage type T. */
template <typename T>
static __device__ __forceinline__ void mma16816(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1) {
#if __CUDA_ARCH__ >= 800
    if constexpr (std::is_same_v<T, __nv_bfloat16>)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                     "{%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                     "{%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#elif __CUDA_ARCH__ >= 750
    /* sm_75: two m16n8k8, the k halves of the same fragments (fp16 only; bf16 is rejected on the host) */
    if constexpr (std::is_same_v<T, __nv_bfloat16>) {
        __trap();
    } else {
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5}, {%6}, "
                     "{%0, %1, %2, %3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(b0));
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5}, {%6}, "
                     "{%0, %1, %2, %3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[2]), "r"(a[3]), "r"(b1));
    }
#endif
}

/* c = A B, the same product without an accumulator in (zero, the register RZ): a product's first k step, whose
 * accumulators then need no zeroing before it. */
template <typename T>
static __device__ __forceinline__ void mma16816_first(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1) {
#if __CUDA_ARCH__ >= 800
    const float zero = 0.f;
    if constexpr (std::is_same_v<T, __nv_bfloat16>)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                     "{%8, %9}, {%10, %10, %10, %10};\n"
                     : "=f"(c[0]), "=f"(c[1]), "=f"(c[2]), "=f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "f"(zero));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                     "{%8, %9}, {%10, %10, %10, %10};\n"
                     : "=f"(c[0]), "=f"(c[1]), "=f"(c[2]), "=f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "f"(zero));
#else
    c[0] = c[1] = c[2] = c[3] = 0.f;
    mma16816<T>(c, a, b0, b1);
#endif
}

/* Four 8 x 8 matrices of 16-bit elements from the shared-memory address addr: lane l gives the address of row
 * l % 8 of matrix l / 8; register j receives, in every lane, row frag_row and columns 2 frag_col, +1 of matrix j
 * (or of its transpose). */
static __device__ __forceinline__ void ldmatrix_x4(uint32_t r[4], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}
static __device__ __forceinline__ void ldmatrix_x4_trans(uint32_t r[4], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

/* 16 bytes from global memory at src to shared memory at dst_s by cp.async (sm_80 on): no register, and the thread
 * does not wait for it; zeros, and nothing read, where real is false. cp_async_commit closes a group of copies,
 * cp_async_wait_all waits for every group of this thread. Before sm_80, and in the instrumented build (whose
 * IO_LOAD must see every load), the kernels copy through a register instead and these two do nothing. */
static __device__ __forceinline__ void cp_async16(void *dst_s, const void *src, bool real) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst_s)), "l"(src),
                 "r"(real ? 16 : 0)
                 : "memory");
}
/* The same for 4 bytes (cp.async's smallest copy, through L1: .ca), for rows of one float. */
static __device__ __forceinline__ void cp_async4(void *dst_s, const void *src, bool real) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_addr(dst_s)), "l"(src), "r"(real ? 4 : 0)
                 : "memory");
}
static __device__ __forceinline__ void cp_async_commit() {
#if __CUDA_ARCH__ >= 800 && !defined(COUNT_IO)
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
static __device__ __forceinline__ void cp_async_wait_all() {
#if __CUDA_ARCH__ >= 800 && !defined(COUNT_IO)
    asm volatile("cp.async.wait_group 0;\n" ::: "memory");
#endif
}

/* 2^x in one MUFU.EX2 instruction: exp2f would add a denormal fix-up around it (results below 2^-126 are
 * flushed to zero here: a p that small adds nothing to a sum of terms of which the largest is 1). */
static __device__ __forceinline__ float fast_exp2(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

#endif
