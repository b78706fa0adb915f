/* Chapter 02's kernels on the GPU, both builds (timed and instrumented): O and L = (m + log2 l) ln 2 against
 * the float64 reference over N in {1, 17, 33, 65, 1000, 1024, 4097}, every d, several tiles, B and H > 1;
 * poisoned outputs (O, l and m) fully written; counted bytes == model to the byte; resources without spills;
 * the program's GPU run. Without a CUDA device these tests skip; with REQUIRE_GPU=1 they fail instead. */
#include "ch02_test.h"

Test(gpu, N_1) { check_gpu_N(&chapter02, 2, 3, 1); }
Test(gpu, N_17) { check_gpu_N(&chapter02, 2, 3, 17); }
Test(gpu, N_33) { check_gpu_N(&chapter02, 2, 3, 33); }
Test(gpu, N_1000) { check_gpu_N(&chapter02, 2, 3, 1000); }
Test(gpu, N_1024) { check_gpu_N(&chapter02, 3, 2, 1024); }
Test(gpu, N_4097_sampled_rows) { check_gpu_N(&chapter02, 1, 2, 4097); }

/* A ragged last K/V block of one real key: the masked columns of every score row must add nothing to l. */
Test(gpu, one_real_key_in_the_last_block_adds_exactly_its_own_weight) { check_gpu_N(&chapter02, 2, 2, 65); }

Test(gpu, resources_every_tile_no_spills) { check_resources(flash_v1_resources, threads_per_block, smem_bytes); }

Test(gpu, chapter_run_gpu_times_counts_and_checks) { check_chapter_runs(&chapter02, 1); }
