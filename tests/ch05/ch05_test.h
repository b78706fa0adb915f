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

/* The mma kernels, steps 2 to 11 (--kernel), in order; the last, mma_async, has two tiles, the others one. */
static const char *const MMA_STEPS[] = {"mma_staged", "repack", "o_registers", "swizzle",  "mma_plain", "unrolled_copy",
                                        "edge_masks", "mma",    "cp_async",    "mma_async"};
enum { MMA_STEP_COUNT = sizeof(MMA_STEPS) / sizeof(MMA_STEPS[0]) };

/* check_problem_tiles (attention_test.h) for every mma kernel (steps 2-10 at their one tile, mma_async at both
 * tiles), both dtypes, both d, causal and not: O and L against float64 under the chapter's rule, counted ==
 * model; on the CPU (dev == NULL) or the GPU (both builds). On a GPU, bf16 is skipped before sm_80, and so is a
 * kernel whose shared memory the GPU does not have (steps 2 and 3 at d = 128 before sm_80). */
static inline void check_tc(const DeviceInfo *dev, int B, int H, int N) {
    for (int x = 0; x < 2; x++)
        for (int y = 0; y < 2; y++)
            for (int causal = 0; causal < 2; causal++) {
                if (dev && TC_DTYPES[x] == DTYPE_BF16 && dev->cc_major < 8) continue;
                Options o = tc_shape(B, H, N, TC_DIMS[y], TC_DTYPES[x], causal);
                for (int k = 0; k < MMA_STEP_COUNT; k++) {
                    char msg[256];
                    cr_assert_eq(option_set(&o, chapter05.options, "kernel", MMA_STEPS[k], msg, sizeof(msg)), 0, "%s", msg);
                    if (dev && tc_smem_bytes(tc_kernel_of(&o), 64, TC_BC, o.d) > (size_t)dev->smem_per_block_optin)
                        continue;
                    const int last = k == MMA_STEP_COUNT - 1;
                    check_problem_tiles(&chapter05, dev, o, last ? MMA_ASYNC_TILES : MMA_TILE, last ? 2 : 1);
                }
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
