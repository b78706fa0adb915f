/* Chapter 06's machine code, read from ./ch06/run without a GPU (cuobjdump -sass): in every kernel of both builds
 * the products are HGMMA (wgmma), d/16 for S with both operands from shared memory and Bc/16 = 4 for O with V read
 * transposed (.tnspB), and nothing goes to local memory (no LDL, STL). Skips where cuobjdump is not installed. */
#include "ch06_test.h"

Test(sass, products_are_hgmma_and_nothing_spills) {
    char out[8192];
    if (run_command("command -v cuobjdump >/dev/null || test -x \"${CUDA:-/usr/local/cuda}/bin/cuobjdump\"", out,
                    sizeof(out)) != 0)
        cr_skip_test("cuobjdump is not installed here (CUDA toolkit, or pip's nvidia-cuda-cuobjdump)");
    /* one line per kernel and build: name, HGMMA without and with .tnspB, LDL/STL */
    const char *cmd =
        "PATH=\"$PATH:${CUDA:-/usr/local/cuda}/bin\" cuobjdump -sass -arch sm_90a ch06/run | awk '"
        "function flush() { if (f ~ /flash_wgmma_kernel/) print f, s, o, l } "
        "/Function : / { flush(); f = $3; s = o = l = 0; next } "
        "/HGMMA/ { if (/tnspB/) o++; else s++ } /LDL|STL/ { l++ } END { flush() }'";
    cr_assert_eq(run_command(cmd, out, sizeof(out)), 0, "%s", out);
    int kernels = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        char name[256];
        int s, o, l;
        cr_assert_eq(sscanf(line, "%255s %d %d %d", name, &s, &o, &l), 4, "%s", line);
        const int d = strstr(name, "ILi128E") ? 128 : 64;
        cr_assert_eq(s, d / 16, "%s: %d HGMMA for S, %d expected", name, s, d / 16);
        cr_assert_eq(o, FA3_BC / 16, "%s: %d HGMMA .tnspB for O, %d expected", name, o, FA3_BC / 16);
        cr_assert_eq(l, 0, "%s: %d local-memory instructions", name, l);
        kernels++;
    }
    cr_assert_eq(kernels, 8, "4 kernels (d = 64, 128; fp16, bf16) in 2 builds: %d found", kernels);
}
