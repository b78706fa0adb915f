/* support.h: running a program from the outside, for every test file (tests run from the repository root). */
#ifndef FA_TEST_SUPPORT_H
#define FA_TEST_SUPPORT_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "chapter.h"

/* 1 when a CUDA device is usable. */
static inline int gpu_available(void) {
    DeviceInfo info;
    return device_query(&info);
}

/* At the top of every GPU test: without a CUDA device the test skips and says why; with REQUIRE_GPU=1 (the GPU
 * machine's runs) a missing device fails it instead. */
#define NEED_GPU()                                                                                           \
    do {                                                                                                     \
        if (!gpu_available()) {                                                                              \
            cr_assert(!require_gpu_env(), "REQUIRE_GPU=1 but no CUDA device");                                  \
            cr_skip_test("no CUDA device: the GPU tests need one (they run on the GPU machine)");            \
        }                                                                                                    \
    } while (0)

/* The defaults with a problem size set: B, H, N, d, and rows = B*H*N as options_parse derives it. Each
 * chapter's shape() sets its own options (tiles, dtype, ...) on top. */
static inline Options shape_options(int B, int H, int N, int d) {
    Options o;
    options_defaults(&o);
    o.B = B;
    o.H = H;
    o.N = N;
    o.d = d;
    o.rows = (long long)B * H * N;
    return o;
}

/* Runs a shell command and puts what it writes to stdout into out (NUL-terminated, as much as fits; the rest is
 * read and dropped so that the command never blocks on a full pipe). Returns the exit status, or -1 when the
 * command did not exit normally. */
static inline int run_command(const char *cmd, char *out, size_t len) {
    FILE *p = popen(cmd, "r");
    cr_assert(p, "cannot run %s", cmd);
    size_t used = 0, got;
    while (used + 1 < len && (got = fread(out + used, 1, len - 1 - used, p)) > 0) used += got;
    out[used] = '\0';
    char rest[4096];
    while (fread(rest, 1, sizeof(rest), p) > 0) {
    }
    const int status = pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Runs ./chNN/run ARGS, stdout and stderr together into out; returns the exit status. */
static inline int run_chapter(const char *chapter, const char *args, char *out, size_t len) {
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "./ch%s/run %s 2>&1", chapter, args);
    return run_command(cmd, out, len);
}

/* Bad input: ./chNN/run ARGS must exit with status 2 and its message must mention `says`. */
static inline void assert_rejected(const char *chapter, const char *args, const char *says) {
    char out[4096];
    cr_assert_eq(run_chapter(chapter, args, out, sizeof(out)), 2, "%s: exit status (output: %s)", args, out);
    cr_assert(strstr(out, says), "%s: the message should mention '%s': %s", args, says, out);
}

#endif
