/* ch06_test.h: chapter 06's tests: the shared attention test helpers and the chapter's headers. */
#ifndef CH06_TEST_H
#define CH06_TEST_H

#include "../attention_test.h"
#include "../../06_flash_v3/ch06.h"
#include "../../06_flash_v3/kernels.h"
#include "../../06_flash_v3/tiles.h"

static const int FA3_TILE[][2] = {{FA3_BR, FA3_BC}};
/* the tiles of warp_specialized, pingpong, overlap, zigzag, queue and tma_store (steps 3-8), all of them compiled at
 * d = 64 (fa3_ws_tile_compiled: 192 x 128 is not at d = 128) */
static const int FA3_WS_TILE[][2] = {{128, 64}, {128, 128}, {192, 128}};
#define FA3_WS_NTILES 3
static const DType FA3_DTYPES[] = {DTYPE_FP16, DTYPE_BF16};
static const int FA3_DIMS[] = {64, 128};
static const char *const FA3_KERNELS[] = {"wgmma",  "tma",   "warp_specialized", "pingpong", "overlap",
                                          "zigzag", "queue", "tma_store",        "dispatch"};
_Static_assert(sizeof(FA3_KERNELS) / sizeof(FA3_KERNELS[0]) == FA3_KERNEL_COUNT, "a name for every kernel");

static inline Options fa3_shape(int B, int H, int N, int d, DType t, int causal) {
    Options o = shape(B, H, N, d, FA3_BR, FA3_BC, causal);
    o.dtype = t;
    return o;
}

/* --kernel NAME on o, as the command line sets it, with the kernel's own tiles (no --br, --bc given). */
static inline void fa3_set_kernel(Options *o, const char *name) {
    char msg[256];
    cr_assert_eq(option_set(o, chapter06.options, "kernel", name, msg, sizeof(msg)), 0, "%s", msg);
    fa3_default_tiles(fa3_kernel_of(o), o, &o->Br, &o->Bc);
}

/* The tiles kernel k is tested with at head dimension d: into tiles, their number returned. dispatch (step 9): one
 * tile of each kernel it runs (step 2's and step 8's, each tested at all of its tiles under its own name). */
static inline int fa3_test_tiles(int k, int d, int (*tiles)[2]) {
    if (k == FA3_KERNEL_DISPATCH) {
        tiles[0][0] = FA3_TILE[0][0], tiles[0][1] = FA3_TILE[0][1];
        tiles[1][0] = FA3_WS_BR, tiles[1][1] = FA3_WS_BC;
        return 2;
    }
    if (!fa3_kernel_persistent(k)) {
        tiles[0][0] = FA3_TILE[0][0], tiles[0][1] = FA3_TILE[0][1];
        return 1;
    }
    int n = 0;
    for (int x = 0; x < FA3_WS_NTILES; x++)
        if (fa3_ws_tile_compiled(FA3_WS_TILE[x][0], FA3_WS_TILE[x][1], d))
            tiles[n][0] = FA3_WS_TILE[x][0], tiles[n][1] = FA3_WS_TILE[x][1], n++;
    return n;
}

/* check_tiles_against (attention_test.h) for every kernel at each of its compiled tiles, both dtypes, both d, causal
 * and not: O and L against float64 under the chapter's rule, counted == model; on the CPU (dev == NULL: the
 * chapter's CPU version under each kernel's name) or the GPU (both builds, outputs poisoned). One reference per
 * problem, shared by the kernels (they compute the same thing from the same inputs). */
static inline void check_fa3(const DeviceInfo *dev, int B, int H, int N) {
    for (int x = 0; x < 2; x++)
        for (int y = 0; y < 2; y++)
            for (int causal = 0; causal < 2; causal++) {
                const Options problem = fa3_shape(B, H, N, FA3_DIMS[y], FA3_DTYPES[x], causal);
                AttnHost t = attn_host_make(chapter_attention(&chapter06, &problem), &problem);
                AttnExpected e = attn_expected(&problem, t.Q, t.K, t.V);
                for (int k = 0; k < FA3_KERNEL_COUNT; k++) {
                    Options o = problem;
                    fa3_set_kernel(&o, FA3_KERNELS[k]);
                    int tiles[FA3_WS_NTILES][2];
                    const int n = fa3_test_tiles(k, FA3_DIMS[y], tiles);
                    cr_assert_gt(check_tiles_against(&chapter06, dev, o, (const int(*)[2])tiles, n, &t, &e), 0,
                                 "%s: no test tile fits this GPU", FA3_KERNELS[k]);
                }
                attn_expected_free(&e);
                attn_host_free(&t);
            }
}

/* At the top of every GPU test: the kernels are sm_90a code, so without a CUDA device, or on a GPU that is not
 * sm_90, the test skips and says why (NEED_GPU: with REQUIRE_GPU=1 a missing device fails instead). Fills *dev. */
#define NEED_HOPPER(dev)                                                                                     \
    do {                                                                                                     \
        NEED_GPU();                                                                                          \
        cr_assert(device_query(dev));                                                                        \
        if (!((dev)->cc_major == 9 && (dev)->cc_minor == 0))                                                 \
            cr_skip_test("%s is sm_%d%d: chapter 06's kernels run on sm_90 only", (dev)->name, (dev)->cc_major, \
                         (dev)->cc_minor);                                                                   \
    } while (0)

#endif
