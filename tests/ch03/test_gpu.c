/* Chapter 03's kernel on the GPU, both builds (timed and instrumented): O and L against the float64
 * reference over N in {1, 17, 33, 1000, 1024, 4097}, every d, causal and not, several tiles; poisoned outputs
 * fully written; counted bytes == model to the byte; resources without spills. Without a CUDA device these
 * tests skip; with REQUIRE_GPU=1 they fail instead. */
#include "../support.h"
#include "ch03_test.h"

/* One shape, one reference; every test tile that fits this GPU, both builds. */
static void gpu_shape(int B, int H, int N, int d, int causal) {
    DeviceInfo dev;
    cr_assert(device_query(&dev));
    Options o = shape(B, H, N, d, 32, 32, causal);
    HostTensors t = host_tensors(&o);
    Expected e = expected_make(&o, t.Q, t.K, t.V);
    int ran = 0;
    for (int k = 0; k < N_TEST_TILES; k++) {
        o.Br = TEST_TILES[k][0];
        o.Bc = TEST_TILES[k][1];
        char msg[512];
        if (chapter03.validate(&o, &dev, msg, sizeof(msg))) continue; /* does not fit this GPU */
        ran++;
        for (int counted = 0; counted < 2; counted++) {
            IoBytes io = {0, 0};
            flash_v2_forward_gpu(&o, t.Q, t.K, t.V, t.O, t.L, counted, &io);
            assert_outputs_match(&e, &o, t.O, t.L, counted ? "gpu (instrumented build)" : "gpu (timed build)");
            if (counted) {
                const IoBytes m = flash_v2_model_bytes(&o);
                char what[128];
                cr_assert_eq(io.read, m.read, "%s: counted read %llu != model %llu", describe(&o, what, 128),
                             io.read, m.read);
                cr_assert_eq(io.write, m.write, "%s: counted write %llu != model %llu", what, io.write, m.write);
            }
        }
    }
    cr_assert_gt(ran, 0, "no test tile fits this GPU");
    expected_free(&e);
    host_free(&t);
}

static void gpu_N(int B, int H, int N) {
    NEED_GPU();
    for (int k = 0; k < 3; k++)
        for (int causal = 0; causal < 2; causal++) gpu_shape(B, H, N, TEST_DIMS[k], causal);
}

Test(gpu, N_1) { gpu_N(2, 3, 1); }
Test(gpu, N_17) { gpu_N(2, 3, 17); }
Test(gpu, N_33) { gpu_N(2, 3, 33); }
Test(gpu, N_1000) { gpu_N(2, 3, 1000); }
Test(gpu, N_1024) { gpu_N(3, 2, 1024); }
Test(gpu, N_4097_sampled_rows) { gpu_N(1, 2, 4097); }

/* Every row of a long ragged causal head, O and L, against reference_attention_head itself. */
Test(gpu, N_4097_every_row_against_reference_attention_head) {
    NEED_GPU();
    const int N = 4097, d = 64;
    Options o = shape(1, 1, N, d, 64, 64, 1);
    HostTensors t = host_tensors(&o);
    double *O_ref = malloc(sizeof(double) * N * d), *L_ref = malloc(sizeof(double) * N);
    reference_attention_head(t.Q, t.K, t.V, N, d, 1, O_ref, L_ref);
    const int tiles[][2] = {{64, 64}, {32, 32}, {128, 16}};
    for (int k = 0; k < 3; k++) {
        o.Br = tiles[k][0];
        o.Bc = tiles[k][1];
        flash_v2_forward_gpu(&o, t.Q, t.K, t.V, t.O, t.L, 0, NULL);
        const ErrorStats eo = error_stats(t.O, O_ref, (size_t)N * d), el = error_stats(t.L, L_ref, N);
        const double tol = flash_v2_tolerance(&o);
        cr_assert(error_ok(&eo, tol), "Br=%d Bc=%d: O rel err %.3e (%zu non-finite)", o.Br, o.Bc, eo.rel, eo.nonfinite);
        cr_assert(error_ok(&el, tol), "Br=%d Bc=%d: L rel err %.3e (%zu non-finite)", o.Br, o.Bc, el.rel, el.nonfinite);
    }
    free(O_ref), free(L_ref);
    host_free(&t);
}

/* Every compiled kernel that fits: threads and shared memory as tiles.h says, at least one resident block,
 * and no spills to local memory (a spill would put memory traffic back into the inner loop). */
Test(gpu, resources_every_tile_no_spills) {
    NEED_GPU();
    DeviceInfo dev;
    cr_assert(device_query(&dev));
    const int Brs[] = {16, 32, 64, 128}, Bcs[] = {16, 32, 64};
    for (int d = 32; d <= 128; d *= 2)
        for (int r = 0; r < 4; r++)
            for (int c = 0; c < 3; c++) {
                if (flash_v2_smem_bytes(Brs[r], Bcs[c], d) > (size_t)dev.smem_per_block_optin) continue;
                KernelResources res;
                flash_v2_resources(d, Brs[r], Bcs[c], &res);
                cr_assert_eq(res.threads, 2 * Brs[r]);
                cr_assert_eq(res.smem_bytes, flash_v2_smem_bytes(Brs[r], Bcs[c], d));
                cr_assert(res.regs > 0 && res.regs <= 255, "d=%d Br=%d Bc=%d: %d registers", d, Brs[r], Bcs[c], res.regs);
                cr_assert_eq(res.local_bytes, 0, "d=%d Br=%d Bc=%d spills %d bytes", d, Brs[r], Bcs[c], res.local_bytes);
                cr_assert_geq(res.blocks_per_sm, 1, "d=%d Br=%d Bc=%d", d, Brs[r], Bcs[c]);
            }
}
