/* Chapter 06's machine code, read from ./ch06/run without a GPU (cuobjdump -sass): in every kernel of both builds
 * the products are HGMMA (wgmma), d/16 for S with both operands from shared memory and Bc/16 = 4 for O with V read
 * transposed (.tnspB), and nothing goes to local memory (no LDL, STL); the tma kernels copy with UTMALDG alone
 * (no LDGSTS, cp.async), one per 64-feature panel of Q_i, K_0, V_0 and of K_j+1, V_j+1; the wgmma kernels with none.
 * Skips where cuobjdump is not installed. */
#include "ch06_test.h"

Test(sass, products_are_hgmma_and_nothing_spills) {
    char out[8192];
    if (run_command("command -v cuobjdump >/dev/null || test -x \"${CUDA:-/usr/local/cuda}/bin/cuobjdump\"", out,
                    sizeof(out)) != 0)
        cr_skip_test("cuobjdump is not installed here (CUDA toolkit, or pip's nvidia-cuda-cuobjdump)");
    /* one line per kernel and build: name, HGMMA without and with .tnspB, LDL/STL */
    const char *cmd =
        "PATH=\"$PATH:${CUDA:-/usr/local/cuda}/bin\" cuobjdump -sass -arch sm_90a ch06/run | awk '"
        "function flush() { if (f ~ /flash_(wgmma|tma)_kernel/) print f, s, o, l, a, t } "
        "/Function : / { flush(); f = $3; s = o = l = a = t = 0; next } "
        "/HGMMA/ { if (/tnspB/) o++; else s++ } /LDL|STL/ { l++ } /LDGSTS/ { a++ } /UTMALDG/ { t++ } END { flush() }'";
    cr_assert_eq(run_command(cmd, out, sizeof(out)), 0, "%s", out);
    int kernels = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        char name[256];
        int s, o, l, a, t;
        cr_assert_eq(sscanf(line, "%255s %d %d %d %d %d", name, &s, &o, &l, &a, &t), 6, "%s", line);
        const int d = strstr(name, "ILi128E") ? 128 : 64, panels = d / FA3_PANEL;
        if (strstr(name, "flash_tma_kernel")) {
            cr_assert_eq(a, 0, "%s: %d LDGSTS", name, a);
            cr_assert_eq(t, 5 * panels, "%s: %d UTMALDG, %d expected", name, t, 5 * panels);
        } else {
            cr_assert_eq(t, 0, "%s: %d UTMALDG", name, t);
        }
        cr_assert_eq(s, d / 16, "%s: %d HGMMA for S, %d expected", name, s, d / 16);
        cr_assert_eq(o, FA3_BC / 16, "%s: %d HGMMA .tnspB for O, %d expected", name, o, FA3_BC / 16);
        cr_assert_eq(l, 0, "%s: %d local-memory instructions", name, l);
        kernels++;
    }
    cr_assert_eq(kernels, 16, "2 steps x 4 kernels (d = 64, 128; fp16, bf16) in 2 builds: %d found", kernels);
}
