/* Chapter 02's kernels on the GPU, both builds (timed and instrumented): O and m + log(l) against the float64
 * reference over N in {1, 17, 33, 1000, 1024, 4097}, every d, several tiles, B and H > 1; poisoned outputs
 * (O, l and m) fully written; counted bytes == model to the byte; resources without spills; the program's
 * GPU run. Without a CUDA device these tests skip; with REQUIRE_GPU=1 they fail instead. */
#include "../support.h"
#include "ch02_test.h"
#include "../../02_flash_v1/kernels.h"
#include "host_tensor.h"

/* One shape, one reference (max_heads heads of it); every test tile, both builds. */
static void gpu_shape(int B, int H, int N, int d, int max_heads) {
    DeviceInfo dev;
    cr_assert(device_query(&dev));
    Options o = shape(B, H, N, d, 32, 32);
    Inputs in = inputs_make(&o);
    Expected e = expected_make(&o, &in, max_heads);
    float *O, *l, *m;
    poisoned_outputs(&o, &O, &l, &m);
    for (int k = 0; k < N_TEST_TILES; k++) {
        o.Br = TEST_TILES[k][0];
        o.Bc = TEST_TILES[k][1];
        char msg[512];
        cr_assert_eq(chapter02.validate(&o, &dev, msg, sizeof(msg)), 0, "every supported tile fits: %s", msg);
        for (int counted = 0; counted < 2; counted++) {
            IoBytes io[FV1_KERNELS];
            flash_v1_forward_gpu(&o, in.Q, in.K, in.V, O, l, m, counted, io);
            assert_outputs_match(&e, &o, O, l, m, counted ? "gpu (instrumented build)" : "gpu (timed build)");
            /* Every output written, not only the compared heads. */
            cr_assert_eq(count_nonfinite(O, in.elems) + count_nonfinite(l, in.rows) + count_nonfinite(m, in.rows),
                         0, "%s: outputs left as poison", describe(&o, msg, sizeof(msg)));
            if (counted) {
                const IoBytes want = flash_v1_model_bytes(&o), want_init = flash_v1_init_bytes(&o);
                describe(&o, msg, sizeof(msg));
                cr_assert_eq(io[FV1_MAIN].read, want.read, "%s: counted read %llu != model %llu", msg,
                             io[FV1_MAIN].read, want.read);
                cr_assert_eq(io[FV1_MAIN].write, want.write, "%s: counted write %llu != model %llu", msg,
                             io[FV1_MAIN].write, want.write);
                cr_assert_eq(io[FV1_INIT].read, want_init.read, "%s: init read", msg);
                cr_assert_eq(io[FV1_INIT].write, want_init.write, "%s: init write", msg);
            }
        }
    }
    free(O), free(l), free(m);
    expected_free(&e);
    inputs_free(&in);
}

static void gpu_N(int B, int H, int N, int max_heads) {
    NEED_GPU();
    for (int x = 0; x < 3; x++) gpu_shape(B, H, N, TEST_DIMS[x], max_heads);
}

Test(gpu, N_1) { gpu_N(2, 3, 1, FV1_CHECK_HEADS); }
Test(gpu, N_17) { gpu_N(2, 3, 17, FV1_CHECK_HEADS); }
Test(gpu, N_33) { gpu_N(2, 3, 33, FV1_CHECK_HEADS); }
Test(gpu, N_1000) { gpu_N(2, 3, 1000, FV1_CHECK_HEADS); }
Test(gpu, N_1024) { gpu_N(3, 2, 1024, FV1_CHECK_HEADS); }
Test(gpu, N_4097_first_and_last_head) { gpu_N(2, 2, 4097, 2); }

/* A ragged last K/V block of one real key: the 15 masked columns of every score row must add nothing to l. */
Test(gpu, one_real_key_in_the_last_block_adds_exactly_its_own_weight) { gpu_N(2, 2, 65, FV1_CHECK_HEADS); }

/* Every compiled kernel: shared memory as tiles.h says, at least one resident block, and no spills to local
 * memory (a spill would add memory traffic to the inner loop). */
Test(gpu, resources_every_tile_no_spills) {
    NEED_GPU();
    DeviceInfo dev;
    cr_assert(device_query(&dev));
    const int tiles[] = {16, 32, 64};
    for (int x = 0; x < 3; x++)
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++) {
                const int d = TEST_DIMS[x], Br = tiles[r], Bc = tiles[c];
                if (flash_v1_smem_bytes(Br, Bc, d) > (size_t)dev.smem_per_block_optin) continue;
                KernelResources res;
                flash_v1_resources(d, Br, Bc, &res);
                cr_assert_eq(res.threads, FV1_THREADS);
                cr_assert_eq(res.smem_bytes, flash_v1_smem_bytes(Br, Bc, d));
                cr_assert(res.regs > 0 && res.regs <= 255, "d=%d Br=%d Bc=%d: %d registers", d, Br, Bc, res.regs);
                cr_assert_eq(res.local_bytes, 0, "d=%d Br=%d Bc=%d spills %d bytes", d, Br, Bc, res.local_bytes);
                cr_assert_geq(res.blocks_per_sm, 1, "d=%d Br=%d Bc=%d", d, Br, Bc);
            }
}

/* The program's GPU path at a small ragged shape: both rows timed and counted (counted == model), the check
 * passes; with --profile's settings nothing is counted or checked. */
Test(gpu, chapter_run_gpu_times_counts_and_checks) {
    NEED_GPU();
    DeviceInfo dev;
    cr_assert(device_query(&dev));
    Options o = shape(3, 5, 300, 64, 64, 16);
    o.reps = 3;
    KernelRun runs[MAX_KERNELS + 1];
    memset(runs, 0, sizeof(runs));
    chapter02.run_gpu(&o, &dev, runs);
    KernelModel m[MAX_KERNELS];
    const int n = chapter02.models(&o, m);
    for (int k = 0; k < n; k++) {
        cr_assert(runs[k].have_time && runs[k].time.median_ms > 0, "%s", m[k].kernel);
        cr_assert(runs[k].have_counted, "%s", m[k].kernel);
        cr_assert_eq(runs[k].counted.read, m[k].model.read, "%s", m[k].kernel);
        cr_assert_eq(runs[k].counted.write, m[k].model.write, "%s", m[k].kernel);
    }
    cr_assert(runs[FV1_MAIN].have_check);
    cr_assert(error_ok(&runs[FV1_MAIN].err, runs[FV1_MAIN].tol), "rel %.3e", runs[FV1_MAIN].err.rel);

    o.profile = 1, o.warmup = 0, o.reps = 1, o.no_check = 1;
    memset(runs, 0, sizeof(runs));
    chapter02.run_gpu(&o, &dev, runs);
    cr_assert(runs[FV1_MAIN].have_time && !runs[FV1_MAIN].have_counted && !runs[FV1_MAIN].have_check);
}
