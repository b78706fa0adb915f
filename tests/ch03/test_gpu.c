/* Chapter 03's kernel on the GPU, both builds (timed and instrumented): O and L against the float64
 * reference over N in {1, 17, 33, 1000, 1024, 4097}, every d, causal and not, several tiles; poisoned outputs
 * fully written; counted bytes == model to the byte; resources without spills; the program's GPU run.
 * Without a CUDA device these tests skip; with REQUIRE_GPU=1 they fail instead. */
#include "ch03_test.h"

Test(gpu, N_1) { check_gpu_N(&chapter03, 2, 3, 1); }
Test(gpu, N_17) { check_gpu_N(&chapter03, 2, 3, 17); }
Test(gpu, N_33) { check_gpu_N(&chapter03, 2, 3, 33); }
Test(gpu, N_1000) { check_gpu_N(&chapter03, 2, 3, 1000); }
Test(gpu, N_1024) { check_gpu_N(&chapter03, 3, 2, 1024); }
Test(gpu, N_4097_sampled_rows) { check_gpu_N(&chapter03, 1, 2, 4097); }

/* Every row of a long ragged causal head, O and L, against reference_attention_head itself. */
Test(gpu, N_4097_every_row_against_reference_attention_head) {
    NEED_GPU();
    const int N = 4097, d = 64;
    Options o = shape(1, 1, N, d, 64, 64, 1);
    AttnHost t = attn_host_make(&flash_v2, &o);
    double *O_ref = malloc(sizeof(double) * N * d), *L_ref = malloc(sizeof(double) * N);
    reference_attention_head(t.Q, t.K, t.V, N, d, 1, O_ref, L_ref);
    const int tiles[][2] = {{64, 64}, {32, 32}, {128, 16}};
    for (int k = 0; k < 3; k++) {
        o.Br = tiles[k][0];
        o.Bc = tiles[k][1];
        attn_host_poison(&t);
        attn_forward_gpu(&flash_v2, &o, &t, 0, NULL);
        const ErrorStats eo = error_stats(t.O, O_ref, (size_t)N * d), el = error_stats(t.L, L_ref, N);
        const double tol = attn_tolerance(&o);
        cr_assert(error_ok(&eo, tol), "Br=%d Bc=%d: O rel err %.3e (%zu non-finite)", o.Br, o.Bc, eo.rel, eo.nonfinite);
        cr_assert(error_ok(&el, tol), "Br=%d Bc=%d: L rel err %.3e (%zu non-finite)", o.Br, o.Bc, el.rel, el.nonfinite);
    }
    free(O_ref), free(L_ref);
    attn_host_free(&t);
}

Test(gpu, resources_every_tile_no_spills) { check_resources(flash_v2_resources, threads_per_block, smem_bytes); }

Test(gpu, chapter_run_gpu_times_counts_and_checks) { check_chapter_runs(&chapter03, 1); }
