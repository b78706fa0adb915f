/* Chapter 06's kernels (wgmma, tma; warp_specialized .. tma_store at each of their tiles) on the GPU, both builds: O
 * and L against the float64 reference under the chapter's rule (twice the plain storage-precision error), fp16 and
 * bf16, d = 64 and 128, causal and not, ragged N, B and H > 1; poisoned outputs fully written; counted == model to
 * the byte; no spills; the program's run. Without a CUDA device, or on a GPU that is not sm_90, these tests skip;
 * with REQUIRE_GPU=1 and no device they fail instead. */
#include "ch06_test.h"

static void gpu_N(int B, int H, int N) {
    DeviceInfo dev;
    NEED_HOPPER(&dev);
    check_fa3(&dev, B, H, N);
}

Test(gpu, N_1) { gpu_N(2, 3, 1); }
Test(gpu, N_17) { gpu_N(2, 3, 17); }
Test(gpu, N_65) { gpu_N(2, 3, 65); }
Test(gpu, N_1000) { gpu_N(2, 3, 1000); }
Test(gpu, N_1024) { gpu_N(1, 2, 1024); }
Test(gpu, N_4097_sampled_rows) { gpu_N(1, 2, 4097); }
/* warp_specialized's persistent grid: 216 or 288 work items (Q tiles x heads) on the H200's 132 blocks, so that
 * blocks take two or three items and the ring's phases carry over from one item to the next (the shapes above
 * have fewer items than SMs: a grid smaller than one wave). */
Test(gpu, N_1000_more_items_than_SMs) { gpu_N(4, 9, 1000); }

/* queue's sections of heads under the causal mask: at N = 300 (Tr = 3 or 2) 450 heads are two sections at d = 64
 * (436 heads and 14) and three at d = 128 (218, 218, 14), on 2-3 times as many items as the H200's 132 blocks; each
 * tile's launch after the first finds the counter the launch before left at 0 (a stale counter would leave items
 * undone, and the poisoned outputs would fail). The same for tma_store, whose blocks take 6 items or more each (1350
 * at Br = 128, 900 at Br = 192, on 132 blocks): each consumer's rows of O_s reused for every next item, once the
 * engine has read them (a consumer that wrote them too early would store another item's rows: the check fails). */
Test(gpu, queue_sections_of_heads) {
    DeviceInfo dev;
    NEED_HOPPER(&dev);
    for (int y = 0; y < 2; y++) {
        Options o = fa3_shape(3, 150, 300, FA3_DIMS[y], DTYPE_BF16, 1);
        cr_assert_eq(fa3_section_heads(o.N, o.d, o.B * o.H), y == 0 ? 436 : 218);
        for (int k = FA3_KERNEL_QUEUE; k <= FA3_KERNEL_TMA_STORE; k++) {
            fa3_set_kernel(&o, FA3_KERNELS[k]);
            int tiles[FA3_WS_NTILES][2];
            const int n = fa3_test_tiles(k, o.d, tiles);
            check_problem_tiles(&chapter06, &dev, o, (const int(*)[2])tiles, n);
        }
    }
}

/* 128 threads, the shared memory tiles.h says, at least one block per SM, and no local memory (ptxas, wgmma: 94
 * registers at d = 64, 153 at d = 128; tma: 90 and 124; no stack). warp_specialized: 128 (1 + Br/64) threads,
 * exactly one block per SM (the persistent grid counts on it), and the registers its setmaxnreg hand-over
 * redistributes (tiles.h): 168 a thread with two consumers, 128 with three. */
Test(gpu, resources_no_spills) {
    DeviceInfo dev;
    NEED_HOPPER(&dev);
    for (int k = 0; k < FA3_KERNEL_COUNT; k++)
        for (int x = 0; x < 2; x++)
            for (int y = 0; y < 2; y++) {
                const int d = FA3_DIMS[y];
                int tiles[FA3_WS_NTILES][2];
                const int n = fa3_test_tiles(k, d, tiles);
                for (int z = 0; z < n; z++) {
                    const int Br = tiles[z][0], Bc = tiles[z][1];
                    KernelResources res;
                    fa3_kernel_resources(k, d, Br, Bc, FA3_DTYPES[x], &res);
                    cr_assert_eq(res.smem_bytes, fa3_kernels[k].tiles.smem_bytes(Br, Bc, d));
                    cr_assert_eq(res.local_bytes, 0, "%s %dx%d d=%d %s spills %d bytes", FA3_KERNELS[k], Br, Bc, d,
                                 dtype_name(FA3_DTYPES[x]), res.local_bytes);
                    if (fa3_kernel_persistent(fa3_kernel_runs(k, Br))) {
                        cr_assert_eq(res.threads, FA3_WS_THREADS(Br));
                        cr_assert_eq(res.blocks_per_sm, 1, "%dx%d d=%d: %d blocks per SM", Br, Bc, d,
                                     res.blocks_per_sm);
                        cr_assert_eq(res.regs, Br == 128 ? 168 : 128, "%dx%d d=%d: %d registers", Br, Bc, d, res.regs);
                    } else {
                        cr_assert_eq(res.threads, FA3_THREADS);
                        cr_assert_geq(res.blocks_per_sm, 1);
                    }
                }
            }
}

Test(gpu, chapter_run_gpu_times_counts_and_checks) {
    DeviceInfo dev;
    NEED_HOPPER(&dev);
    for (int k = 0; k < FA3_KERNEL_COUNT; k++) {
        Options o = fa3_shape(3, 5, 300, 128, DTYPE_FP16, 1);
        fa3_set_kernel(&o, FA3_KERNELS[k]);
        o.reps = 3;
        KernelRun runs[MAX_KERNELS + 1];
        memset(runs, 0, sizeof(runs));
        chapter_run_gpu(&chapter06, &o, &dev, runs);
        KernelModel m[MAX_KERNELS];
        memset(m, 0, sizeof(m));
        chapter06.models(&o, m);
        cr_assert(runs[0].have_time && runs[0].have_counted && runs[0].have_check, "%s", FA3_KERNELS[k]);
        cr_assert_eq(runs[0].counted.read, m[0].model.read, "%s", FA3_KERNELS[k]);
        cr_assert_eq(runs[0].counted.write, m[0].model.write, "%s", FA3_KERNELS[k]);
        cr_assert(error_ok(&runs[0].err, runs[0].tol), "%s: rel %.3e tol %.3e", FA3_KERNELS[k], runs[0].err.rel,
                  runs[0].tol);
    }
}
