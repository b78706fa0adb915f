/* ch05_test.h: chapter 05's tests: the shared attention test helpers and the chapter's headers. */
#ifndef CH05_TEST_H
#define CH05_TEST_H

#include "../attention_test.h"
#include "../../05_tensor_cores/ch05.h"
#include "../../05_tensor_cores/kernels.h"
#include "../../05_tensor_cores/tiles.h"
#include "../../05_tensor_cores/wmma_tiles.h"

static const int MMA_TILE[][2] = {{MMA_BR, TC_BC}};
static const int MMA_ASYNC_TILES[][2] = {{64, TC_BC}, {MMA_ASYNC_BR, TC_BC}};
static const DType TC_DTYPES[] = {DTYPE_FP16, DTYPE_BF16};
static const int TC_DIMS[] = {64, 128};

static inline Options tc_shape(int B, int H, int N, int d, DType t, int causal) {
    Options o = shape(B, H, N, d, 64, 64, causal);
    o.dtype = t;
    return o;
}

/* check_problem_tiles (attention_test.h) for the mma kernel (its one tile) and the mma_async kernel (both
 * tiles), both dtypes, both d, causal and not: O and L against float64 under the chapter's rule, counted ==
 * model; on the CPU (dev == NULL) or the GPU (both builds). bf16 is skipped on a GPU before sm_80. */
static inline void check_tc(const DeviceInfo *dev, int B, int H, int N) {
    for (int x = 0; x < 2; x++)
        for (int y = 0; y < 2; y++)
            for (int causal = 0; causal < 2; causal++) {
                if (dev && TC_DTYPES[x] == DTYPE_BF16 && dev->cc_major < 8) continue;
                Options o = tc_shape(B, H, N, TC_DIMS[y], TC_DTYPES[x], causal);
                option_assign(&o, CH05_OPT_KERNEL, TC_KERNEL_MMA);
                check_problem_tiles(&chapter05, dev, o, MMA_TILE, 1);
                option_assign(&o, CH05_OPT_KERNEL, TC_KERNEL_MMA_ASYNC);
                check_problem_tiles(&chapter05, dev, o, MMA_ASYNC_TILES, 2);
            }
}

/* The wmma kernel (--kernel wmma): its one tile, Br = Bc = 64. */
static const int WMMA_TILE[][2] = {{WMMA_BR, WMMA_BC}};

static inline Options wmma_shape(int B, int H, int N, int d, DType t, int causal) {
    Options o = tc_shape(B, H, N, d, t, causal);
    option_assign(&o, CH05_OPT_KERNEL, TC_KERNEL_WMMA);
    return o;
}

/* check_tc for the wmma kernel: both dtypes, both d, causal and not, its one tile; on the CPU (dev == NULL:
 * the chapter's CPU version under the kernel's name) or the GPU (both builds). On a GPU, bf16 is skipped before
 * sm_80 and a d whose shared memory the GPU does not have (d = 128 before sm_80) is skipped. */
static inline void check_wmma(const DeviceInfo *dev, int B, int H, int N) {
    int ran = 0;
    for (int x = 0; x < 2; x++)
        for (int y = 0; y < 2; y++)
            for (int causal = 0; causal < 2; causal++) {
                if (dev && TC_DTYPES[x] == DTYPE_BF16 && dev->cc_major < 8) continue;
                if (dev && wmma_smem_bytes(WMMA_BR, WMMA_BC, TC_DIMS[y]) > (size_t)dev->smem_per_block_optin) continue;
                check_problem_tiles(&chapter05, dev, wmma_shape(B, H, N, TC_DIMS[y], TC_DTYPES[x], causal), WMMA_TILE, 1);
                ran++;
            }
    cr_assert_gt(ran, 0, "no wmma shape fits this GPU");
}

#endif
