/* Chapter 05's machine code, read from ./ch05/run without a GPU (cuobjdump -sass, sm_90): in every kernel of both
 * builds the two products run on the tensor cores, MT ((d/16)(Bc/8) + (Bc/16)(d/8)) HMMA.16816 in the loop's body
 * (one per mma.sync.m16n8k16, two per wmma 16x16x16; MT = Br / 64 m16 tiles per warp, two for mma_async at
 * Br = 128); every mma step (2 to 11) loads its operands by ldmatrix: V_j's (Bc/16)(d/16) fragments transposed
 * (LDSM.MT88), K_j's (d/16)(Bc/16) and Q_i's MT (d/16) not, and step 2 (mma_staged) P_ij's MT (Bc/16) from shared
 * memory as well; and nothing goes to local memory (no LDL, STL) but in mma_async at d = 128 with 32 rows per warp
 * (README: its 16 bytes of spills). The steps that cannot run here (no GPU) are read here. Skips where cuobjdump is
 * not installed or the program has no sm_90 code. */
#include "ch05_test.h"

Test(sass, products_on_tensor_cores_operands_by_ldmatrix_no_local_memory) {
    SKIP_IN_SANITIZED_PASS("it reads the machine code (cuobjdump), no host code");
    char out[16384], tool[1024];
    NEED_CUOBJDUMP(tool);
    char cmd[2048];
    snprintf(cmd, sizeof(cmd), "'%s' -lelf ch05/run 2>/dev/null | grep -q sm_90", tool);
    if (run_command(cmd, out, sizeof(out)) != 0) cr_skip_test("ch05/run has no sm_90 machine code (built for another ARCH)");
    /* one line per kernel and build: name, HMMA, LDSM, LDSM.MT88, LDL/STL */
    snprintf(cmd, sizeof(cmd), "'%s' -sass -arch sm_90 ch05/run | awk '"
        "function flush() { if (f ~ /flash_[a-z_]+_kernel/) print f, h, l, t, m } "
        "/Function : / { flush(); f = $3; h = l = t = m = 0; next } "
        "/HMMA\\.16816/ { h++ } /LDSM/ { if (/MT88/) t++; else l++ } /LDL|STL/ { m++ } END { flush() }'", tool);
    cr_assert_eq(run_command(cmd, out, sizeof(out)), 0, "%s", out);
    int kernels = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        char name[256];
        int h, l, t, m, d = 0, Br = 64;
        cr_assert_eq(sscanf(line, "%255s %d %d %d %d", name, &h, &l, &t, &m), 5, "%s", line);
        const int async = strstr(name, "flash_mma_async_kernel") != NULL;
        const char *args = strstr(name, "kernelILi");
        cr_assert(args, "%s", name);
        cr_assert_eq(async ? sscanf(args + 9, "%dELi%dE", &d, &Br) : sscanf(args + 9, "%dE", &d), async ? 2 : 1, "%s",
                     name);
        const int MT = Br / 64, Bc = TC_BC;
        cr_assert_eq(h, MT * ((d / 16) * (Bc / 8) + (Bc / 16) * (d / 8)), "%s: %d HMMA.16816", name, h);
        if (!strstr(name, "flash_wmma_kernel")) {
            const int staged = strstr(name, "flash_mma_staged_kernel") != NULL;
            cr_assert_eq(t, (Bc / 16) * (d / 16), "%s: %d LDSM.MT88 (V_j)", name, t);
            cr_assert_eq(l, (d / 16) * (Bc / 16) + MT * (d / 16) + staged * MT * (Bc / 16), "%s: %d LDSM", name, l);
        }
        cr_assert(m == 0 || (async && d == 128 && Br == 128), "%s: %d local-memory instructions", name, m);
        kernels++;
    }
    cr_assert_eq(kernels, 2 * (4 * (TC_KERNEL_COUNT - 1) + 8),
                 "10 steps x 4 kernels (d = 64, 128; fp16, bf16) and mma_async's 8 (Br = 64, 128 too), in 2 builds: %d",
                 kernels);
}
