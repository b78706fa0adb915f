/* --save in chapter 07: the files hold the inputs, the forward's outputs, dO and the gradients the program computed
 * (causal, ragged tiles), run.json names the run, and a run that cannot save is refused before any work. */
#include "ch07_test.h"

#define ARGS "--batch 2 --heads 3 --seq 33 --br 64 --bc 32 --causal"

static void assert_saved_gradients(const char *dir, const Options *o, const BwdHost *t) {
    long long bhnd[4], bhn[3];
    save_shape_bhnd(o, bhnd);
    save_shape_bhn(o, bhn);
    assert_saved(dir, "Q", "<f4", 4, bhnd, t->Q);
    assert_saved(dir, "K", "<f4", 4, bhnd, t->K);
    assert_saved(dir, "V", "<f4", 4, bhnd, t->V);
    assert_saved(dir, "O", "<f4", 4, bhnd, t->O);
    assert_saved(dir, "L", "<f4", 3, bhn, t->L);
    assert_saved(dir, "dO", "<f4", 4, bhnd, t->dO);
    assert_saved(dir, "dQ", "<f4", 4, bhnd, t->dQ);
    assert_saved(dir, "dK", "<f4", 4, bhnd, t->dK);
    assert_saved(dir, "dV", "<f4", 4, bhnd, t->dV);
}

Test(save, cpu_run_saves_what_it_computed) {
    const Options o = bwd_shape(2, 3, 33, 64, 64, 32, 1, BWD_FLASH);
    char dir[64];
    save_dir_new(dir, sizeof(dir));
    run_saving("07", "--cpu " ARGS, dir);
    BwdHost t = bwd_host_make(&o);
    IoBytes io[MAX_KERNELS];
    cpu_pass(&o, &t, io);
    assert_saved_gradients(dir, &o, &t);
    const char *says[] = {"\"chapter\": \"07\"", "\"computed_on\": \"cpu\"", "\"causal\": true",
                          "{\"file\": \"dQ.npy\", \"descr\": \"<f4\", \"shape\": [2, 3, 33, 64]}", "\"check\": \"ok\""};
    assert_run_json_says(dir, says, (int)(sizeof(says) / sizeof(says[0])));
    save_dir_remove(dir);
    bwd_host_free(&t);
}

/* On the GPU: the program saves the gradients the GPU computed, within the check's tolerance of float64. */
Test(save, gpu_run_saves_what_the_gpu_computed) {
    NEED_GPU();
    const Options o = bwd_shape(2, 3, 33, 64, 64, 32, 1, BWD_FLASH);
    char dir[64];
    save_dir_new(dir, sizeof(dir));
    run_saving("07", ARGS, dir);
    const char *says[] = {"\"computed_on\": \"gpu\"", "\"check\": \"ok\""};
    assert_run_json_says(dir, says, 2);
    BwdHost t = bwd_host_make(&o);
    float **grads[3] = {&t.dQ, &t.dK, &t.dV};
    const char *names[3] = {"dQ", "dK", "dV"};
    for (int g = 0; g < 3; g++) {
        size_t n;
        float *x = saved_floats(dir, names[g], &n);
        cr_assert_eq(n, t.n, "%s", names[g]);
        free(*grads[g]);
        *grads[g] = x;
    }
    BwdExpected e = bwd_expected(&o, &t);
    assert_grads_match(&e, &o, &t, "saved by the program");
    bwd_expected_free(&e);
    bwd_host_free(&t);
    save_dir_remove(dir);
}

Test(save, refused_before_any_work) { assert_save_refusals("07", "--cpu " ARGS); }

/* Nine arrays: Q, K, V, O, dO, dQ, dK, dV [B, H, N, d] and L [B, H, N]. */
Test(save, the_plan_has_the_gradients) {
    const Options o = bwd_shape(10, 64, 1024, 64, 32, 32, 0, BWD_FLASH);
    const SavePlan p = chapter_save_plan(&chapter07, &o);
    cr_assert_eq(p.n, 9);
    const char *names[] = {"Q", "K", "V", "O", "L", "dO", "dQ", "dK", "dV"};
    for (int x = 0; x < 9; x++) cr_assert(save_plan_has(&p, names[x]), "%s", names[x]);
    cr_assert_eq(p.bytes, 8ull * (128 + 4ull * 10 * 64 * 1024 * 64) + 128 + 4ull * 10 * 64 * 1024);
}
