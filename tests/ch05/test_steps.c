/* Chapter 05's steps read as diffs (README, "The steps"): the step files are the chapter's N_name.cu in the order of
 * N, then kernels.cu, one per kernel (TcKernel) and each naming its own --kernel; `diff` of two consecutive files, a
 * step's one idea, changes at most 200 lines (lines diff marks < or >; chapter 04's kernel -> 1_wmma.cu, a new
 * chapter, is not one of them). No GPU. */
#include "ch05_test.h"

Test(steps, each_step_is_a_diff_of_at_most_200_lines) {
    SKIP_IN_SANITIZED_PASS("it reads the chapter's sources, no host code");
    char out[4096];
    cr_assert_eq(run_command("cd 05_tensor_cores && ls [0-9]*_*.cu | sort -n && echo kernels.cu", out, sizeof(out)), 0,
                 "%s", out);
    char files[TC_KERNEL_COUNT + 1][64];
    int n = 0;
    for (char *line = strtok(out, "\n"); line && n <= TC_KERNEL_COUNT; line = strtok(NULL, "\n"))
        snprintf(files[n++], sizeof(files[0]), "%s", line);
    cr_assert_eq(n, TC_KERNEL_COUNT, "%d step files for %d kernels", n, TC_KERNEL_COUNT);
    for (int k = 0; k < n; k++) {
        char cmd[1024], got[256];
        if (k < n - 1) cr_assert_eq(atoi(files[k]), k + 1, "step %d is %s", k + 1, files[k]);
        snprintf(cmd, sizeof(cmd), "grep -c -- '--kernel %s[] ]' 05_tensor_cores/%s", tc_kernel_option(k), files[k]);
        cr_assert_eq(run_command(cmd, got, sizeof(got)), 0, "%s does not name --kernel %s", files[k],
                     tc_kernel_option(k));
        if (k == 0) continue;
        snprintf(cmd, sizeof(cmd), "diff 05_tensor_cores/%s 05_tensor_cores/%s | grep -c '^[<>]'", files[k - 1],
                 files[k]);
        run_command(cmd, got, sizeof(got)); /* diff exits 1 when the files differ */
        const int changed = atoi(got);
        cr_assert_gt(changed, 0, "%s and %s are the same", files[k - 1], files[k]);
        cr_assert_leq(changed, 200, "diff %s %s: %d changed lines, more than one idea's 200", files[k - 1], files[k],
                      changed);
    }
}
