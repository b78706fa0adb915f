/* --save in chapter 04: the files hold what the program computed with the layout asked for, run.json names the
 * layout, NumPy agrees with the files, and a run that cannot save is refused before any work. */
#include "ch04_test.h"

#define ARGS "--batch 1 --heads 2 --seq 45 --br 16 --bc 32 --causal --layout swizzled"
static Options problem(void) { return layout_shape(LAYOUT_SWIZZLED, 1, 2, 45, 64, 16, 32, 1); }

Test(save, cpu_run_saves_what_it_computed) {
    check_saved_cpu_run(&chapter04, problem(), ARGS);
    char dir[64];
    save_dir_new(dir, sizeof(dir));
    run_saving("04", "--cpu " ARGS, dir);
    const char *says[] = {"\"layout\": \"swizzled\"", "\"kernels\": [\"flash_v4_swizzled\"]"};
    assert_run_json_says(dir, says, 2);
    save_dir_remove(dir);
}
Test(save, gpu_run_saves_what_the_gpu_computed) { check_saved_gpu_run(&chapter04, problem(), ARGS); }
Test(save, numpy_recomputes_O_and_L) { check_saved_numpy(&chapter04, ARGS); }
Test(save, refused_before_any_work) { assert_save_refusals("04", "--cpu " ARGS); }
