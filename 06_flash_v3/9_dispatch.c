/* 9_dispatch.c: chapter 06, step 9 (the last): no new kernel. The tile, and with it the kernel, by the problem.
 *
 *   ./ch06/run --kernel dispatch [--br 64|128|192] [--bc 64|128]
 *              Br = 64 (Bc = 64): step 2's kernel (flash_tma_kernel), one warpgroup a block, as many blocks an SM as
 *              fit; Br = 128 or 192: step 8's (flash_tma_store_kernel), one persistent block an SM
 *
 * What changes from step 8: which kernel runs. Steps 3-8 put one long-lived block on each SM, two or three consumer
 * warpgroups and a producer, and each work item (a Q tile of one head) pays a fixed cost besides its K/V blocks: Q_i's
 * copy, the first product's latency before any softmax can start, the last product and the epilogue. At d = 64 and up
 * to FA3_DISPATCH_SHORT tokens an item has 4-8 K/V blocks of 128 keys (half that, on average, with the causal mask),
 * the products are short (d = 64: half the work of d = 128 per score, the same softmax), and those costs are a large
 * part of the item: the SM's few warps wait on them (README, "Step 9": Nsight Compute's warps per scheduler). Step 2's
 * blocks are independent, 128 threads and 40 KB of shared memory each at d = 64, so that several share an SM and one's
 * waits are covered by another's work. There step 2 measured the faster (README, "Step 9"), everywhere else step 8. So
 * this step runs step 2's kernel at Br = 64, its default tile at d = 64 up to FA3_DISPATCH_SHORT tokens (chapter.c,
 * fa3_default_tiles), and step 8's at every other tile: what a library does, choosing among its kernels by the problem.
 * Both kernels move the same bytes but for step 8's counter, and do the same arithmetic: the model, the counted bytes
 * and the checks are those of the kernel that runs. */
#include "kernels.h"
#include "tiles.h"

void flash_dispatch_launch(const AttnArgs *a) {
    if (fa3_dispatch_small(a->Br)) flash_tma_launch(a);
    else flash_tma_store_launch(a);
}

void flash_dispatch_launch_counted(const AttnArgs *a) {
    if (fa3_dispatch_small(a->Br)) flash_tma_launch_counted(a);
    else flash_tma_store_launch_counted(a);
}
