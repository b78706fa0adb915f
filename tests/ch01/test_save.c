/* --save in chapter 01: x, the input rows, and y_KERNEL, each kernel's output rows, as [rows, N] '<f4', exactly
 * what the program computed; NumPy agrees with them; a run that cannot save is refused before any work. */
#include "ch01_test.h"
#include "../save_test.h"

#define ARGS "--rows 5 --seq 77"
enum { R = 5, N = 77 };

static void assert_saved_inputs(const char *dir, const long long shape[2]) {
    float *x = malloc(sizeof(float) * R * N);
    ScorePool pool = score_pool(1234);
    score_pool_fill(&pool, 0, (size_t)R * N, x);
    assert_saved(dir, "x", "<f4", 2, shape, x);
    score_pool_free(&pool);
    free(x);
}

Test(save, cpu_run_saves_what_it_computed) {
    char dir[64];
    save_dir_new(dir, sizeof(dir));
    run_saving("01", "--cpu " ARGS, dir);
    const long long shape[2] = {R, N};
    assert_saved_inputs(dir, shape);
    float *x = malloc(sizeof(float) * R * N), *y = malloc(sizeof(float) * R * N), *ml = malloc(sizeof(float) * 2 * R * N);
    ScorePool pool = score_pool(1234);
    score_pool_fill(&pool, 0, (size_t)R * N, x);
    for (int k = 0; k < CH01_KERNELS; k++) {
        IoBytes io = {0, 0};
        softmax_cpu(k, x, y, ml, R, N, BLOCKWISE_CHUNK, &io);
        char name[64];
        snprintf(name, sizeof(name), "y_%s", ch01_kernel_names[k]);
        assert_saved(dir, name, "<f4", 2, shape, y);
    }
    const char *says[] = {"\"chapter\": \"01\"", "\"computed_on\": \"cpu\"", "\"rows\": 5", "\"N\": 77",
                          "{\"file\": \"y_softmax_online.npy\", \"descr\": \"<f4\", \"shape\": [5, 77]}",
                          "\"kernel\": \"softmax_blockwise\""};
    assert_run_json_says(dir, says, 6);
    score_pool_free(&pool);
    free(x), free(y), free(ml);
    save_dir_remove(dir);
}

/* On the GPU: x exactly, each y within the chapter's tolerance of the float64 softmax of x, every element finite. */
Test(save, gpu_run_saves_what_the_gpu_computed) {
    NEED_GPU();
    char dir[64];
    save_dir_new(dir, sizeof(dir));
    run_saving("01", ARGS, dir);
    const char *says[] = {"\"computed_on\": \"gpu\""};
    assert_run_json_says(dir, says, 1);
    const long long shape[2] = {R, N};
    assert_saved_inputs(dir, shape);
    size_t n;
    float *x = saved_floats(dir, "x", &n);
    double *s = malloc(sizeof(double) * R * N), *ref = malloc(sizeof(double) * R * N);
    for (int i = 0; i < R * N; i++) s[i] = x[i];
    reference_softmax_rows(s, R, N, ref);
    for (int k = 0; k < CH01_KERNELS; k++) {
        char name[64];
        snprintf(name, sizeof(name), "y_%s", ch01_kernel_names[k]);
        float *y = saved_floats(dir, name, &n);
        cr_assert_eq(n, (size_t)R * N);
        ErrorStats e = error_stats_empty();
        error_stats_merge(&e, y, ref, n);
        cr_assert(error_ok(&e, CH01_TOL), "%s: rel err %.3e", name, error_stats_rel(&e));
        free(y);
    }
    free(x), free(s), free(ref);
    save_dir_remove(dir);
}

Test(save, numpy_recomputes_each_softmax) {
    NEED_NUMPY();
    char dir[64];
    save_dir_new(dir, sizeof(dir));
    run_saving("01", "--cpu " ARGS, dir);
    const char *outputs[] = {"y_softmax_3pass", "y_softmax_online", "y_softmax_blockwise"};
    assert_numpy_check_passes(dir, outputs, 3);
    assert_numpy_check_catches(dir, "y_softmax_online", 100);
    save_dir_remove(dir);
}

Test(save, refused_before_any_work) {
    assert_save_refusals("01", "--cpu " ARGS);
    /* the article's rows (B*H*N = 655,360 rows of 1024 floats): 2.7 GB for x alone */
    assert_save_refused_first("01", "--save /tmp/fa_save_never", "raise it with --save-max BYTES");
}
