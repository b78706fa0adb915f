/* --save in chapter 00: Q, K, V, O and S, P [B, H, N, N] in the storage type ('<f4', '<f2'), exactly what the
 * program computed; S and P left out (and said so) where they would pass --save-max; NumPy agrees with the files;
 * a run that cannot save is refused before any work. */
#include "ch00_test.h"
#include "../save_test.h"

#define ARGS "--batch 1 --heads 2 --seq 33"

static Options problem(DType t) {
    Options o = shape_options(1, 2, 33, 64);
    o.dtype = t;
    return o;
}

/* The chapter's CPU version for o: Q, K, V, S, P, O (malloc'd, in this order in x[]). */
static void cpu_arrays(const Options *o, float *x[6]) {
    const size_t n = (size_t)o->B * o->H * o->N * o->d, nn = (size_t)o->B * o->H * o->N * o->N;
    for (int i = 0; i < 6; i++) x[i] = malloc(sizeof(float) * (i == 3 || i == 4 ? nn : n));
    std_attn_inputs(o, x[0], x[1], x[2]);
    IoBytes io[SA_KERNELS];
    std_attn_forward_cpu(o, x[0], x[1], x[2], x[3], x[4], x[5], io, NULL);
}

static void assert_saved_run(const char *dir, const Options *o, const char *descr, int with_scores) {
    float *x[6];
    cpu_arrays(o, x);
    long long bhnd[4], bhnn[4] = {o->B, o->H, o->N, o->N};
    save_shape_bhnd(o, bhnd);
    const char *names[6] = {"Q", "K", "V", "S", "P", "O"};
    for (int i = 0; i < 6; i++) {
        const int scores = i == 3 || i == 4;
        if (scores && !with_scores) {
            char path[512];
            snprintf(path, sizeof(path), "%s/%s.npy", dir, names[i]);
            cr_assert(access(path, F_OK) != 0, "%s should have been left out", path);
        } else {
            assert_saved(dir, names[i], descr, 4, scores ? bhnn : bhnd, x[i]);
        }
        free(x[i]);
    }
}

Test(save, cpu_run_saves_what_it_computed_in_the_storage_type) {
    for (int t = 0; t < 2; t++) {
        char dir[64];
        save_dir_new(dir, sizeof(dir));
        run_saving("00", t ? "--cpu " ARGS " --dtype fp16" : "--cpu " ARGS, dir);
        const Options o = problem(t ? DTYPE_FP16 : DTYPE_FP32);
        assert_saved_run(dir, &o, t ? "<f2" : "<f4", 1);
        const char *says[] = {"\"chapter\": \"00\"", "\"computed_on\": \"cpu\"", t ? "\"npy_descr\": \"<f2\"" : "\"npy_descr\": \"<f4\"",
                              "{\"file\": \"S.npy\"", "\"kernel\": \"total\"", "\"scale\": 0.125"};
        assert_run_json_says(dir, says, 6);
        save_dir_remove(dir);
    }
}

/* A limit that holds Q, K, V and O but not S and P too: those two are left out, and the report and run.json say
 * so. */
Test(save, scores_left_out_where_they_would_pass_the_limit) {
    Options o = problem(DTYPE_FP32);
    const SavePlan all = chapter_save_plan(&chapter00, &o);
    cr_assert(save_plan_has(&all, "S") && save_plan_has(&all, "P") && all.n == 6);
    o.save_max = all.bytes - 1;
    const SavePlan some = chapter_save_plan(&chapter00, &o);
    cr_assert(!save_plan_has(&some, "S") && !save_plan_has(&some, "P") && some.n == 4);
    cr_assert_eq(some.left_out_bytes, all.bytes - some.bytes);
    char dir[64], args[256], out[1 << 15];
    save_dir_new(dir, sizeof(dir));
    snprintf(args, sizeof(args), "--cpu " ARGS " --save %s --save-max %llu", dir, all.bytes - 1);
    cr_assert_eq(run_chapter("00", args, out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "note: S.npy and P.npy"), "%s", out);
    assert_saved_run(dir, &o, "<f4", 0);
    const char *says[] = {"\"left_out\": {\"files\": [\"S.npy\", \"P.npy\"]"};
    assert_run_json_says(dir, says, 1);
    save_dir_remove(dir);
    snprintf(args, sizeof(args), "--cpu " ARGS " --save %s --save-max %llu", dir, some.bytes - 1);
    assert_save_refused_first("00", args, "more than the limit");
}

/* On the GPU (own GEMMs and cuBLAS, fp32 and fp16, with and without the check): the inputs exactly, O, S and P
 * within the chapter's tolerance of the CPU version's. */
Test(save, gpu_run_saves_what_the_gpu_computed) {
    NEED_GPU();
    const char *extra[] = {"", " --gemm cublas", " --dtype fp16", " --dtype fp16 --no-check"};
    for (int v = 0; v < 4; v++) {
        const Options o = problem(v >= 2 ? DTYPE_FP16 : DTYPE_FP32);
        char dir[64], args[256];
        save_dir_new(dir, sizeof(dir));
        snprintf(args, sizeof(args), ARGS "%s", extra[v]);
        run_saving("00", args, dir);
        const char *says[] = {"\"computed_on\": \"gpu\""};
        assert_run_json_says(dir, says, 1);
        float *x[6];
        cpu_arrays(&o, x);
        const char *names[6] = {"Q", "K", "V", "S", "P", "O"};
        for (int i = 0; i < 6; i++) {
            size_t n;
            float *got = saved_floats(dir, names[i], &n);
            ErrorStats e = error_stats_empty();
            double *ref = malloc(sizeof(double) * n);
            for (size_t k = 0; k < n; k++) ref[k] = x[i][k];
            error_stats_merge(&e, got, ref, n);
            const double tol = i < 3 ? 0.0 : std_attn_tolerance(&o);
            cr_assert(e.nonfinite == 0 && error_stats_rel(&e) <= tol, "%s%s: %s rel err %.3e > %.1e", ARGS, extra[v],
                      names[i], error_stats_rel(&e), tol);
            free(ref), free(got), free(x[i]);
        }
        save_dir_remove(dir);
    }
}

Test(save, numpy_recomputes_O_S_and_P) {
    NEED_NUMPY();
    for (int t = 0; t < 2; t++) {
        char dir[64];
        save_dir_new(dir, sizeof(dir));
        run_saving("00", t ? "--cpu " ARGS " --dtype fp16" : "--cpu " ARGS, dir);
        const char *outputs[] = {"O", "S", "P"};
        assert_numpy_check_passes(dir, outputs, 3);
        if (!t) assert_numpy_check_catches(dir, "P", 40);
        save_dir_remove(dir);
    }
}

Test(save, refused_before_any_work) { assert_save_refusals("00", "--cpu " ARGS); }
