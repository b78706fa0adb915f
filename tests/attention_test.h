/* attention_test.h: what the tests of every FlashAttention chapter (02 onward) share: options for a shape, one
 * forward pass on the CPU or the GPU through the chapter's AttnChapter, the check of its outputs against the
 * float64 reference, and counted bytes against the model. A chapter's test header adds its tiles. */
#ifndef FA_ATTENTION_TEST_H
#define FA_ATTENTION_TEST_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"
#include "attention.h"
#include "driver.h"
#include "save_test.h"

static const int TEST_DIMS[] = {32, 64, 128};

static inline Options shape(int B, int H, int N, int d, int Br, int Bc, int causal) {
    Options o = shape_options(B, H, N, d);
    o.Br = Br;
    o.Bc = Bc;
    o.causal = causal;
    return o;
}

static inline const char *describe(const Options *o, char *buf, size_t len) {
    snprintf(buf, len, "B=%d H=%d N=%d d=%d Br=%d Bc=%d%s", o->B, o->H, o->N, o->d, o->Br, o->Bc,
             o->causal ? " causal" : "");
    return buf;
}

/* The chapter's CPU version over every head of t (poisoned first), its bytes into io[k] per kernel. */
static inline void cpu_forward(const AttnChapter *c, const Options *o, AttnHost *t, IoBytes *io) {
    double ms[MAX_KERNELS];
    for (int k = 0; k < c->nkernels; k++) io[k] = io_bytes(0, 0);
    attn_host_poison(t);
    c->forward_cpu(o, t, io, ms);
    attn_host_finish(c, t);
}

/* O and L of one run against e: every element of both finite (none left as poison), both within tolerance. */
static inline void assert_outputs_match(const AttnChapter *c, const AttnExpected *e, const Options *o,
                                        const AttnHost *t, const char *what) {
    char text[128];
    describe(o, text, sizeof(text));
    ErrorStats err_O, err_L;
    attn_compare(e, o, t->O, t->L, &err_O, &err_L);
    double tol_O, tol_L;
    attn_chapter_tolerances(c, o, t, e, &tol_O, &tol_L);
    cr_assert_eq(err_O.nonfinite, 0, "%s %s: %zu elements of O are NaN or inf (unwritten?)", what, text,
                 err_O.nonfinite);
    cr_assert_eq(err_L.nonfinite, 0, "%s %s: %zu rows of L (or of l, m) are NaN or inf (unwritten?)", what, text,
                 err_L.nonfinite);
    cr_assert(error_ok(&err_O, tol_O), "%s %s: O rel err %.3e > %.2e (max abs %.3e)", what, text,
              error_stats_rel(&err_O), tol_O, err_O.max_abs);
    cr_assert(error_ok(&err_L, tol_L), "%s %s: L rel err %.3e > %.2e (max abs %.3e)", what, text,
              error_stats_rel(&err_L), tol_L, err_L.max_abs);
}

/* Each kernel's counted bytes equal its row of the chapter's model, to the byte. */
static inline void assert_counted_equals_model(const Chapter *ch, const Options *o, const IoBytes *io,
                                               const char *what) {
    KernelModel m[MAX_KERNELS];
    memset(m, 0, sizeof(m));
    const int n = ch->models(o, m);
    cr_assert_eq(n, chapter_attention(ch, o)->nkernels);
    char text[128];
    describe(o, text, sizeof(text));
    for (int k = 0; k < n; k++) {
        cr_assert_eq(io[k].read, m[k].model.read, "%s %s %s: counted read %llu != model %llu", what, text,
                     m[k].kernel, io[k].read, m[k].model.read);
        cr_assert_eq(io[k].write, m[k].model.write, "%s %s %s: counted write %llu != model %llu", what, text,
                     m[k].kernel, io[k].write, m[k].model.write);
    }
}

/* (Br, Bc) pairs every correctness test runs: the article's, both extremes, and unequal ones both ways. */
static const int TEST_TILES[][2] = {{32, 32}, {16, 16}, {64, 64}, {128, 64}, {16, 64}, {64, 16}, {128, 32}};
#define N_TEST_TILES ((int)(sizeof(TEST_TILES) / sizeof(TEST_TILES[0])))

/* The test tiles of one shape against inputs t and their reference e (made for that shape): on the CPU
 * (dev == NULL), or on the GPU in both builds (timed and instrumented) for each tile that fits dev. Outputs
 * poisoned before every GPU run, O and L checked, counted bytes == model. Returns how many tiles ran. */
static inline int check_tiles_against(const Chapter *ch, const DeviceInfo *dev, Options o, const int (*tiles)[2],
                                      int ntiles, AttnHost *t, const AttnExpected *e) {
    int ran = 0;
    for (int k = 0; k < ntiles; k++) {
        o.Br = tiles[k][0];
        o.Bc = tiles[k][1];
        char msg[512];
        if (dev && ch->validate(&o, dev, msg, sizeof(msg))) continue; /* does not fit this GPU */
        ran++;
        IoBytes io[MAX_KERNELS];
        if (!dev) {
            cpu_forward(chapter_attention(ch, &o), &o, t, io);
            assert_outputs_match(chapter_attention(ch, &o), e, &o, t, "cpu");
            assert_counted_equals_model(ch, &o, io, "cpu");
            continue;
        }
        for (int counted = 0; counted < 2; counted++) {
            attn_host_poison(t);
            attn_forward_gpu(chapter_attention(ch, &o), &o, t, counted, io);
            assert_outputs_match(chapter_attention(ch, &o), e, &o, t, counted ? "gpu (instrumented build)" : "gpu (timed build)");
            if (counted) assert_counted_equals_model(ch, &o, io, "gpu");
        }
    }
    return ran;
}

/* One shape, one reference, every test tile (check_tiles_against). */
static inline void check_problem_tiles(const Chapter *ch, const DeviceInfo *dev, Options o, const int (*tiles)[2],
                                       int ntiles) {
    AttnHost t = attn_host_make(chapter_attention(ch, &o), &o);
    AttnExpected e = attn_expected(&o, t.Q, t.K, t.V);
    cr_assert_gt(check_tiles_against(ch, dev, o, tiles, ntiles, &t, &e), 0, "no test tile fits this GPU");
    attn_expected_free(&e);
    attn_host_free(&t);
}

static inline void check_problem(const Chapter *ch, const DeviceInfo *dev, Options o) {
    check_problem_tiles(ch, dev, o, TEST_TILES, N_TEST_TILES);
}

static inline void check_shape(const Chapter *ch, const DeviceInfo *dev, int B, int H, int N, int d, int causal) {
    check_problem(ch, dev, shape(B, H, N, d, 32, 32, causal));
}

/* check_shape on the GPU for every d, causal and not where the chapter has the mask. */
static inline void check_gpu_N(const Chapter *ch, int B, int H, int N) {
    NEED_GPU();
    DeviceInfo dev;
    cr_assert(device_query(&dev));
    const int masks = ch->features & CLI_CAUSAL ? 2 : 1;
    for (int x = 0; x < 3; x++)
        for (int causal = 0; causal < masks; causal++) check_shape(ch, &dev, B, H, N, TEST_DIMS[x], causal);
}

/* Every compiled kernel that fits: threads and shared memory as tiles.h says, at least one resident block,
 * and no spills to local memory (a spill would put memory traffic back into the inner loop). */
static inline void check_resources(void (*resources)(int d, int Br, int Bc, KernelResources *r),
                                   int (*threads)(int Br), size_t (*smem)(int Br, int Bc, int d)) {
    NEED_GPU();
    DeviceInfo dev;
    cr_assert(device_query(&dev));
    const int Brs[] = {16, 32, 64, 128}, Bcs[] = {16, 32, 64};
    for (int d = 32; d <= 128; d *= 2)
        for (int r = 0; r < 4; r++)
            for (int c = 0; c < 3; c++) {
                if (smem(Brs[r], Bcs[c], d) > (size_t)dev.smem_per_block_optin) continue;
                KernelResources res;
                resources(d, Brs[r], Bcs[c], &res);
                cr_assert_eq(res.threads, threads(Brs[r]));
                cr_assert_eq(res.smem_bytes, smem(Brs[r], Bcs[c], d));
                cr_assert(res.regs > 0 && res.regs <= 255, "d=%d Br=%d Bc=%d: %d registers", d, Brs[r], Bcs[c],
                          res.regs);
                cr_assert_eq(res.local_bytes, 0, "d=%d Br=%d Bc=%d spills %d bytes", d, Brs[r], Bcs[c],
                             res.local_bytes);
                cr_assert_geq(res.blocks_per_sm, 1, "d=%d Br=%d Bc=%d", d, Brs[r], Bcs[c]);
            }
}

/* The program's runs at a small ragged shape: every row timed and counted (counted == model), the check on
 * the last row passes; with --profile's settings nothing is counted or checked. */
static inline void check_chapter_runs(const Chapter *ch, int gpu) {
    DeviceInfo dev;
    if (gpu) {
        NEED_GPU();
        cr_assert(device_query(&dev));
    }
    Options o = shape(3, 5, 300, 64, 64, 16, ch->features & CLI_CAUSAL ? 1 : 0);
    o.reps = 3;
    KernelRun runs[MAX_KERNELS + 1];
    memset(runs, 0, sizeof(runs));
    if (gpu) chapter_run_gpu(ch, &o, &dev, runs);
    else chapter_run_cpu(ch, &o, runs);
    KernelModel m[MAX_KERNELS];
    memset(m, 0, sizeof(m));
    const int n = ch->models(&o, m);
    for (int k = 0; k < n; k++) {
        cr_assert(runs[k].have_time && runs[k].time.median_ms >= 0, "%s", m[k].kernel);
        cr_assert(runs[k].have_counted, "%s", m[k].kernel);
        cr_assert_eq(runs[k].counted.read, m[k].model.read, "%s", m[k].kernel);
        cr_assert_eq(runs[k].counted.write, m[k].model.write, "%s", m[k].kernel);
    }
    cr_assert(runs[n - 1].have_check);
    cr_assert(error_ok(&runs[n - 1].err, runs[n - 1].tol), "rel %.3e", runs[n - 1].err.rel);
    if (!gpu) return;
    o.profile = 1, o.warmup = 0, o.reps = 1, o.no_check = 1;
    memset(runs, 0, sizeof(runs));
    chapter_run_gpu(ch, &o, &dev, runs);
    cr_assert(runs[n - 1].have_time && !runs[n - 1].have_counted && !runs[n - 1].have_check);
}

/* ---- --save -------------------------------------------------------------------------------------------- */

/* DIR holds t's Q, K, V, O [B, H, N, d] and L [B, H, N], '<f4', element for element. */
static inline void assert_saved_host(const char *dir, const Options *o, const AttnHost *t) {
    long long bhnd[4], bhn[3];
    save_shape_bhnd(o, bhnd);
    save_shape_bhn(o, bhn);
    assert_saved(dir, "Q", "<f4", 4, bhnd, t->Q);
    assert_saved(dir, "K", "<f4", 4, bhnd, t->K);
    assert_saved(dir, "V", "<f4", 4, bhnd, t->V);
    assert_saved(dir, "O", "<f4", 4, bhnd, t->O);
    assert_saved(dir, "L", "<f4", 3, bhn, t->L);
}

/* ./chNN/run --cpu ARGS --save DIR (ARGS: the problem o describes) writes exactly what the chapter's CPU version
 * computes here for o, and a run.json that names the run; then the harness itself (attn_run_cpu with o.save_dir)
 * writes the same files. */
static inline void check_saved_cpu_run(const Chapter *ch, Options o, const char *args) {
    char dir[64], cmd[512], shape_L[128], chapter[32];
    save_dir_new(dir, sizeof(dir));
    snprintf(cmd, sizeof(cmd), "--cpu %s", args);
    run_saving(ch->id, cmd, dir);
    const AttnChapter *c = chapter_attention(ch, &o);
    AttnHost t = attn_host_make(c, &o);
    IoBytes io[MAX_KERNELS];
    cpu_forward(c, &o, &t, io);
    assert_saved_host(dir, &o, &t);
    snprintf(chapter, sizeof(chapter), "\"chapter\": \"%s\"", ch->id);
    snprintf(shape_L, sizeof(shape_L), "{\"file\": \"L.npy\", \"descr\": \"<f4\", \"shape\": [%d, %d, %d]}", o.B,
             o.H, o.N);
    const char *says[] = {chapter, "\"gpu\": \"cpu\"", "\"computed_on\": \"cpu\"", o.causal ? "\"causal\": true" : "\"causal\": false",
                          "\"dtype\": \"fp32\"", "\"scale\": 0.125", "\"seed\": 1234", shape_L, "\"time_ms_median\": ",
                          "\"counted_read_bytes\": ", "\"check\": \"ok\""};
    assert_run_json_says(dir, says, (int)(sizeof(says) / sizeof(says[0])));
    save_dir_remove(dir);

    save_dir_new(dir, sizeof(dir));
    o.save_dir = dir;
    KernelRun runs[MAX_KERNELS + 1];
    memset(runs, 0, sizeof(runs));
    attn_run_cpu(c, &o, runs);
    assert_saved_host(dir, &o, &t);
    save_dir_remove(dir);
    attn_host_free(&t);
}

/* On the GPU: ./chNN/run ARGS --save DIR saves the inputs exactly and the outputs the GPU computed (O and L
 * within the check's tolerance of float64, every element finite), and run.json says so; the harness itself
 * (attn_run_gpu) too, with --no-check's settings (the forward pass then runs for --save alone). */
static inline void check_saved_gpu_run(const Chapter *ch, Options o, const char *args) {
    NEED_GPU();
    char dir[64];
    save_dir_new(dir, sizeof(dir));
    const AttnChapter *c = chapter_attention(ch, &o);
    AttnHost t = attn_host_make(c, &o);
    AttnExpected e = attn_expected(&o, t.Q, t.K, t.V);
    for (int harness = 0; harness < 2; harness++) {
        if (!harness) {
            run_saving(ch->id, args, dir);
            const char *says[] = {"\"computed_on\": \"gpu\"", "\"check\": \"ok\""};
            assert_run_json_says(dir, says, 2);
        } else {
            Options g = o;
            g.save_dir = dir, g.no_check = 1, g.reps = 2;
            KernelRun runs[MAX_KERNELS + 1];
            memset(runs, 0, sizeof(runs));
            attn_host_poison(&t);
            attn_run_gpu(c, &g, runs);
        }
        long long bhnd[4];
        save_shape_bhnd(&o, bhnd);
        assert_saved(dir, "Q", "<f4", 4, bhnd, t.Q);
        assert_saved(dir, "V", "<f4", 4, bhnd, t.V);
        size_t nO, nL;
        float *O = saved_floats(dir, "O", &nO), *L = saved_floats(dir, "L", &nL);
        cr_assert_eq(nO, t.n);
        cr_assert_eq(nL, t.rows);
        memcpy(t.O, O, sizeof(float) * t.n);
        memcpy(t.L, L, sizeof(float) * t.rows);
        free(O), free(L);
        assert_outputs_match(chapter_attention(ch, &o), &e, &o, &t, harness ? "saved by attn_run_gpu" : "saved by the program");
    }
    attn_expected_free(&e);
    attn_host_free(&t);
    save_dir_remove(dir);
}

/* The independent check: NumPy recomputes O and L in float64 from the saved Q, K, V; a changed element of O or L
 * fails it. Skips where python3 or NumPy is missing. ARGS as for check_saved_cpu_run. */
static inline void check_saved_numpy(const Chapter *ch, const char *args) {
    NEED_NUMPY();
    char dir[64], cmd[512];
    save_dir_new(dir, sizeof(dir));
    snprintf(cmd, sizeof(cmd), "--cpu %s", args);
    run_saving(ch->id, cmd, dir);
    const char *outputs[] = {"O", "L"};
    assert_numpy_check_passes(dir, outputs, 2);
    assert_numpy_check_catches(dir, "O", 7);
    assert_numpy_check_catches(dir, "L", 3);
    save_dir_remove(dir);
}

#endif
