/* save_test.h: what the --save tests of every chapter share: a fresh directory, an array read back (npy.h's
 * reader) with its header checked, its elements compared with what the test computed, the refusals before any
 * work, and the independent NumPy check (skipped, saying so, where python3 or NumPy is missing). */
#ifndef FA_SAVE_TEST_H
#define FA_SAVE_TEST_H

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "support.h"
#include "npy.h"
#include "save.h"

/* A new empty directory under /tmp; save_dir_remove deletes it with its files. */
static inline void save_dir_new(char *dir, size_t len) {
    snprintf(dir, len, "/tmp/fa_save.XXXXXX");
    cr_assert(mkdtemp(dir), "mkdtemp failed");
}

static inline void save_dir_remove(const char *dir) {
    char cmd[512], out[256];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    run_command(cmd, out, sizeof(out));
}

/* DIR/name.npy read back: version 1.0, the header padded to a multiple of 64 bytes, C order, this descr and
 * this shape. The caller frees it (npy_free). */
static inline NpyArray saved_array(const char *dir, const char *name, const char *descr, int ndim,
                                   const long long *shape) {
    char path[512], err[512];
    snprintf(path, sizeof(path), "%s/%s.npy", dir, name);
    NpyArray a;
    cr_assert(npy_read(path, &a, err, sizeof(err)), "%s", err);
    cr_assert_eq(a.header_len % 64, 0, "%s: header of %zu bytes, not a multiple of 64", path, a.header_len);
    cr_assert_str_eq(a.descr, descr, "%s: descr", path);
    cr_assert_eq(a.fortran_order, 0, "%s: fortran_order", path);
    cr_assert_eq(a.ndim, ndim, "%s: %d dimensions, expected %d", path, a.ndim, ndim);
    for (int i = 0; i < ndim; i++)
        cr_assert_eq(a.shape[i], shape[i], "%s: shape[%d] = %lld, expected %lld", path, i, a.shape[i], shape[i]);
    return a;
}

/* Every element of a ('<f4' or '<f2') is exactly want[i] in that storage type (little-endian bytes). */
static inline void assert_saved_equals(const NpyArray *a, const float *want, size_t n, const char *what) {
    cr_assert_eq(a->count, n, "%s: %zu elements, expected %zu", what, a->count, n);
    const unsigned char *b = (const unsigned char *)a->data;
    for (size_t i = 0; i < n; i++) {
        if (a->elem_size == 4) {
            const uint32_t got = (uint32_t)b[4 * i] | (uint32_t)b[4 * i + 1] << 8 | (uint32_t)b[4 * i + 2] << 16 |
                                 (uint32_t)b[4 * i + 3] << 24;
            uint32_t exp;
            memcpy(&exp, &want[i], 4);
            cr_assert_eq(got, exp, "%s: element %zu differs (bits %08x, expected %08x = %g)", what, i, got, exp,
                         (double)want[i]);
        } else {
            const uint32_t got = (uint32_t)b[2 * i] | (uint32_t)b[2 * i + 1] << 8;
            cr_assert_eq(got, half_from_float(want[i]), "%s: element %zu differs (bits %04x, expected %g)", what, i,
                         got, (double)want[i]);
        }
    }
}

/* DIR/name.npy holds exactly want (shape and all). */
static inline void assert_saved(const char *dir, const char *name, const char *descr, int ndim,
                                const long long *shape, const float *want) {
    NpyArray a = saved_array(dir, name, descr, ndim, shape);
    size_t n = 1;
    for (int i = 0; i < ndim; i++) n *= (size_t)shape[i];
    char what[600];
    snprintf(what, sizeof(what), "%s/%s.npy", dir, name);
    assert_saved_equals(&a, want, n, what);
    npy_free(&a);
}

/* The elements of DIR/name.npy as floats ('<f4' or '<f2'), malloc'd. */
static inline float *saved_floats(const char *dir, const char *name, size_t *n) {
    char path[512], err[512];
    snprintf(path, sizeof(path), "%s/%s.npy", dir, name);
    NpyArray a;
    cr_assert(npy_read(path, &a, err, sizeof(err)), "%s", err);
    float *x = (float *)malloc(sizeof(float) * (a.count ? a.count : 1));
    const unsigned char *b = (const unsigned char *)a.data;
    for (size_t i = 0; i < a.count; i++) {
        if (a.elem_size == 4) {
            const uint32_t u = (uint32_t)b[4 * i] | (uint32_t)b[4 * i + 1] << 8 | (uint32_t)b[4 * i + 2] << 16 |
                               (uint32_t)b[4 * i + 3] << 24;
            memcpy(&x[i], &u, 4);
        } else {
            x[i] = half_to_float((uint16_t)(b[2 * i] | b[2 * i + 1] << 8));
        }
    }
    *n = a.count;
    npy_free(&a);
    return x;
}

/* DIR/run.json as text (into buf), and each of `says` in it. */
static inline void assert_run_json_says(const char *dir, const char *const *says, int n) {
    char path[512], buf[16384];
    snprintf(path, sizeof(path), "%s/run.json", dir);
    FILE *f = fopen(path, "r");
    cr_assert(f, "%s is missing", path);
    const size_t got = fread(buf, 1, sizeof(buf) - 1, f);
    buf[got] = '\0';
    fclose(f);
    for (int i = 0; i < n; i++) cr_assert(strstr(buf, says[i]), "%s should say %s: %s", path, says[i], buf);
}

/* ./chNN/run ARGS --save DIR succeeds and says where it saved. */
static inline void run_saving(const char *chapter, const char *args, const char *dir) {
    char cmd_args[768], out[1 << 15], says[600];
    snprintf(cmd_args, sizeof(cmd_args), "%s --save %s", args, dir);
    cr_assert_eq(run_chapter(chapter, cmd_args, out, sizeof(out)), 0, "%s: %.3000s", cmd_args, out);
    snprintf(says, sizeof(says), "saved to %s/:", dir);
    cr_assert(strstr(out, says), "%s: the report should say '%s': %.3000s", cmd_args, says, out);
}

/* ./chNN/run ARGS (which holds --save) exits 2 at once, its message mentioning `says`, before any work: no report,
 * no model, no CPU run, under 2 s. */
static inline void assert_save_refused_first(const char *chapter, const char *args, const char *says) {
    char out[16384];
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    const int rc = run_chapter(chapter, args, out, sizeof(out));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    const double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    cr_assert_eq(rc, 2, "%s: exit 2 expected (output: %.2000s)", args, out);
    cr_assert(strstr(out, says), "%s: the message should mention '%s': %.2000s", args, out, says);
    char title[32];
    snprintf(title, sizeof(title), "chapter %s", chapter);
    cr_assert(strstr(out, title) == NULL && strstr(out, "IO/FLOP model") == NULL && strstr(out, "CPU version") == NULL,
              "%s: nothing may run before --save is checked: %.2000s", args, out);
    cr_assert(s < 2.0, "%s: took %.2f s: --save is checked before any work", args, s);
}

/* --help describes --save and --save-max. The refusals every chapter shares: more than --save-max (the directory is then not even created), a directory
 * that cannot be created (its parent is a file), --save-max without --save, --save with --model. `args` is a small
 * problem of the chapter. */
static inline void assert_save_refusals(const char *chapter, const char *args) {
    char dir[64], cmd[768], file[600], help[8192];
    cr_assert_eq(run_chapter(chapter, "--help", help, sizeof(help)), 0);
    cr_assert(strstr(help, "--save DIR") && strstr(help, "--save-max BYTES") && strstr(help, "2 GiB"),
              "--help should describe --save and --save-max: %s", help);
    save_dir_new(dir, sizeof(dir));
    snprintf(cmd, sizeof(cmd), "%s --save %s/new --save-max 1000", args, dir);
    assert_save_refused_first(chapter, cmd, "more than the limit of 1,000 bytes");
    snprintf(file, sizeof(file), "%s/new", dir);
    cr_assert(access(file, F_OK) != 0, "%s: a refused run created its directory", cmd);

    snprintf(file, sizeof(file), "%s/a-file", dir);
    FILE *f = fopen(file, "w");
    cr_assert(f);
    fclose(f);
    snprintf(cmd, sizeof(cmd), "%s --save %s/sub", args, file);
    assert_save_refused_first(chapter, cmd, "cannot create the directory");
    snprintf(cmd, sizeof(cmd), "%s --save %s", args, file);
    assert_save_refused_first(chapter, cmd, "cannot create the directory");
    snprintf(cmd, sizeof(cmd), "%s --save-max 100000", args);
    assert_save_refused_first(chapter, cmd, "--save-max limits --save");
    snprintf(cmd, sizeof(cmd), "%s --model --save %s/m", args, dir);
    assert_save_refused_first(chapter, cmd, "--model computes nothing to save");
    save_dir_remove(dir);
}

/* ---- the independent check in NumPy -------------------------------------------------------------------- */

/* Reads run.json and the arrays, recomputes in float64 and prints each output's relative L2 error; exit 1 when
 * one is above tol (1e-4 for fp32, 1e-2 for fp16) or not finite, or a shape is wrong. Attention:
 * O = softmax(Q K^T / sqrt(d)) V with the causal mask where run.json says so, L = logsumexp of the scaled scores,
 * S and P where saved. Chapter 01: each y_KERNEL = softmax(x) row by row. */
#define SAVE_NUMPY_CHECK                                                                                          \
    "import json, sys\n"                                                                                          \
    "import numpy as np\n"                                                                                        \
    "d = sys.argv[1]\n"                                                                                           \
    "r = json.load(open(d + \"/run.json\"))\n"                                                                    \
    "names = [f[\"file\"][:-4] for f in r[\"files\"]]\n"                                                          \
    "load = lambda n: np.load(d + \"/\" + n + \".npy\").astype(np.float64)\n"                                     \
    "tol = 1e-4 if r[\"dtype\"] == \"fp32\" else 1e-2\n"                                                          \
    "bad = 0\n"                                                                                                   \
    "def check(name, got, want):\n"                                                                               \
    "    global bad\n"                                                                                            \
    "    assert got.shape == want.shape, (name, got.shape, want.shape)\n"                                         \
    "    fin = np.isfinite(want)\n"                                                                               \
    "    same_inf = np.array_equal(np.isfinite(got), fin) and np.array_equal(got[~fin], want[~fin])\n"          \
    "    err = np.linalg.norm(got[fin] - want[fin]) / max(np.linalg.norm(want[fin]), 1e-300)\n"                   \
    "    print(\"numpy: %s rel err %.3e\" % (name, err))\n"                                                       \
    "    if not (err <= tol and same_inf): bad = 1\n"                                                             \
    "if \"x\" in names:\n"                                                                                        \
    "    x = load(\"x\")\n"                                                                                       \
    "    assert x.shape == (r[\"rows\"], r[\"N\"]), x.shape\n"                                                    \
    "    e = np.exp(x - x.max(-1, keepdims=True))\n"                                                              \
    "    for n in names:\n"                                                                                       \
    "        if n.startswith(\"y_\"): check(n, load(n), e / e.sum(-1, keepdims=True))\n"                          \
    "else:\n"                                                                                                     \
    "    Q, K, V = load(\"Q\"), load(\"K\"), load(\"V\")\n"                                                       \
    "    assert Q.shape == (r[\"B\"], r[\"H\"], r[\"N\"], r[\"d\"]), Q.shape\n"                                   \
    "    S = Q @ K.swapaxes(-1, -2) / np.sqrt(Q.shape[-1])\n"                                                     \
    "    if r[\"causal\"]: S = np.where(np.tril(np.ones(S.shape[-2:], bool)), S, -np.inf)\n"                      \
    "    L = np.logaddexp.reduce(S, axis=-1)\n"                                                                   \
    "    P = np.exp(S - L[..., None])\n"                                                                          \
    "    check(\"O\", load(\"O\"), P @ V)\n"                                                                      \
    "    if \"L\" in names: check(\"L\", load(\"L\"), L)\n"                                                       \
    "    if \"S\" in names: check(\"S\", load(\"S\"), S)\n"                                                       \
    "    if \"P\" in names: check(\"P\", load(\"P\"), P)\n"                                                       \
    "sys.exit(bad)\n"

/* 1 when python3 can import NumPy. */
static inline int numpy_available(void) {
    char out[256];
    return run_command("python3 -c 'import numpy' 2>&1", out, sizeof(out)) == 0;
}

#define NEED_NUMPY()                                                                                              \
    do {                                                                                                          \
        if (!numpy_available())                                                                                   \
            cr_skip_test("python3 with NumPy is not installed here: the independent NumPy check of --save's files " \
                         "was not run (it is optional: pip install numpy)");                                      \
    } while (0)

/* The NumPy check on DIR: exit 0, and a line for each output in `outputs`. */
/* python3 -c 'SAVE_NUMPY_CHECK' DIR (the script holds no single quote). */
static inline int run_numpy_check(const char *dir, char *out, size_t len) {
    char cmd[8192];
    snprintf(cmd, sizeof(cmd), "python3 -c '%s' '%s' 2>&1", SAVE_NUMPY_CHECK, dir);
    return run_command(cmd, out, len);
}

static inline void assert_numpy_check_passes(const char *dir, const char *const *outputs, int n) {
    char out[8192];
    cr_assert_eq(run_numpy_check(dir, out, sizeof(out)), 0, "the NumPy check of %s failed: %s", dir, out);
    for (int i = 0; i < n; i++) {
        char says[64];
        snprintf(says, sizeof(says), "numpy: %s rel err", outputs[i]);
        cr_assert(strstr(out, says), "the NumPy check should have checked %s: %s", outputs[i], out);
    }
}

/* The NumPy check must fail on a wrong output: element `at` of DIR/name.npy ('<f4') is changed, the check is run
 * again (exit 1 expected), and the file is restored. */
static inline void assert_numpy_check_catches(const char *dir, const char *name, size_t at) {
    char path[512], out[8192];
    snprintf(path, sizeof(path), "%s/%s.npy", dir, name);
    NpyArray a;
    char err[512];
    cr_assert(npy_read(path, &a, err, sizeof(err)), "%s", err);
    FILE *f = fopen(path, "r+b");
    cr_assert(f);
    float v, wrong;
    cr_assert_eq(fseek(f, (long)(a.header_len + at * a.elem_size), SEEK_SET), 0);
    cr_assert_eq(fread(&v, 4, 1, f), 1);
    wrong = v + 10.0f;
    cr_assert_eq(fseek(f, (long)(a.header_len + at * a.elem_size), SEEK_SET), 0);
    cr_assert_eq(fwrite(&wrong, 4, 1, f), 1);
    fclose(f);
    cr_assert_eq(run_numpy_check(dir, out, sizeof(out)), 1, "a changed %s should fail the NumPy check: %s", name, out);
    f = fopen(path, "r+b");
    cr_assert(f);
    cr_assert_eq(fseek(f, (long)(a.header_len + at * a.elem_size), SEEK_SET), 0);
    cr_assert_eq(fwrite(&v, 4, 1, f), 1);
    fclose(f);
    npy_free(&a);
}

#endif
