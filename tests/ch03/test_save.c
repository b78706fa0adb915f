/* --save in chapter 03: the files hold what the program computed (causal, ragged tiles), NumPy agrees with them,
 * and a run that cannot save is refused before any work. */
#include "ch03_test.h"

#define ARGS "--batch 2 --heads 3 --seq 33 --br 64 --bc 16 --causal"
static Options problem(void) { return shape(2, 3, 33, 64, 64, 16, 1); }

Test(save, cpu_run_saves_what_it_computed) { check_saved_cpu_run(&chapter03, problem(), ARGS); }
Test(save, gpu_run_saves_what_the_gpu_computed) { check_saved_gpu_run(&chapter03, problem(), ARGS); }
Test(save, numpy_recomputes_O_and_L) { check_saved_numpy(&chapter03, ARGS); }
Test(save, numpy_recomputes_O_and_L_without_the_mask) { check_saved_numpy(&chapter03, "--batch 2 --heads 4 --seq 70 --dim 32"); }
Test(save, refused_before_any_work) { assert_save_refusals("03", "--cpu " ARGS); }

/* The default size (10 x 64 heads of 1024 x 64 floats: 5 arrays, 671,744,000 bytes of data and headers) is within
 * the default 2 GiB; --seq 4096 would write 2.68 GB: refused, and allowed again by --save-max (checked, then
 * refused by --save-max 1 below it). */
Test(save, the_limit_is_the_planned_bytes) {
    Options o = shape(10, 64, 4096, 64, 32, 32, 0);
    const SavePlan p = chapter_save_plan(&chapter03, &o);
    cr_assert_eq(p.n, 5);
    cr_assert_eq(p.bytes, 4ull * (128 + 4ull * 10 * 64 * 4096 * 64) + 128 + 4ull * 10 * 64 * 4096);
    assert_save_refused_first("03", "--seq 4096 --save /tmp/fa_save_never", "more than the limit of 2,147,483,648 bytes");
    char args[256];
    snprintf(args, sizeof(args), "--seq 4096 --save /tmp/fa_save_never --save-max %llu", p.bytes - 1);
    assert_save_refused_first("03", args, "more than the limit");
}
