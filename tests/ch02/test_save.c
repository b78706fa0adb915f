/* --save in chapter 02: the files hold what the program computed (L from l and m by attn_lse_from_l_m), NumPy
 * agrees with them, and a run that cannot save is refused before any work. */
#include "ch02_test.h"

#define ARGS "--batch 2 --heads 3 --seq 33 --br 32 --bc 16"
static Options problem(void) { return shape(2, 3, 33, 64, 32, 16, 0); }

Test(save, cpu_run_saves_what_it_computed) { check_saved_cpu_run(&chapter02, problem(), ARGS); }
Test(save, gpu_run_saves_what_the_gpu_computed) { check_saved_gpu_run(&chapter02, problem(), ARGS); }
Test(save, numpy_recomputes_O_and_L) { check_saved_numpy(&chapter02, ARGS); }
Test(save, refused_before_any_work) { assert_save_refusals("02", "--cpu " ARGS); }
