/* Step 6's machine code, read from ./ch07/run without a GPU (cuobjdump -sass): in each of its kernels (d = 64, 128;
 * fp16, bf16; both builds) the five products are HGMMA (wgmma): d/16 each for S^T and dP^T with both operands
 * K-major, Br/16 each for dV_j and dK_j with B read transposed (.tnspB alone), Bc/16 for dQ_i with A and B read
 * transposed (.tnspA and .tnspB); the warpgroup waits twice with one group still running (WARPGROUP.DEPBAR.LE gsb0,
 * 0x1: S^T done while dP^T runs, dP^T done while dV_j runs) and once for all; nothing goes to local memory. And
 * ptxas's reports of 6_wgmma.cu (OBJECT.ptxas, beside each object) say no wgmma was serialized (C7510-C7515) and
 * nothing spills. Skips where cuobjdump is not installed, or no object was built here. */
#include "ch07_test.h"

Test(sass, step_6_products_are_hgmma_with_two_partial_waits) {
    SKIP_IN_SANITIZED_PASS("it reads the machine code (cuobjdump), no host code");
    char out[8192], tool[1024];
    NEED_CUOBJDUMP(tool);
    char cmd[2048];
    snprintf(cmd, sizeof(cmd), "'%s' -sass -arch sm_90a ch07/run | awk '"
        "function flush() { if (f ~ /tc_wgmma_bwd_kernel/) print f, s, b, ab, a, w1, w0, l } "
        "/Function : / { flush(); f = $3; s = b = ab = a = w1 = w0 = l = 0; next } "
        "/HGMMA/ { if (/tnspA/ && /tnspB/) ab++; else if (/tnspB/) b++; else if (/tnspA/) a++; else s++ } "
        "/WARPGROUP.DEPBAR.LE gsb0, 0x1 ;/ { w1++ } /WARPGROUP.DEPBAR.LE gsb0, 0x0 ;/ { w0++ } /LDL|STL/ { l++ } "
        "END { flush() }'", tool);
    cr_assert_eq(run_command(cmd, out, sizeof(out)), 0, "%s", out);
    int kernels = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        char name[256];
        int s, b, ab, a, w1, w0, l;
        cr_assert_eq(sscanf(line, "%255s %d %d %d %d %d %d %d", name, &s, &b, &ab, &a, &w1, &w0, &l), 8, "%s", line);
        const int d = strstr(name, "ILi128E") ? 128 : 64;
        cr_assert_eq(s, 2 * d / 16, "%s: %d HGMMA for S^T and dP^T, %d expected", name, s, 2 * d / 16);
        cr_assert_eq(b, 2 * TC_WG_BR / 16, "%s: %d HGMMA .tnspB for dV, dK", name, b);
        cr_assert_eq(ab, TC_WG_BC / 16, "%s: %d HGMMA .tnspA .tnspB for dQ", name, ab);
        cr_assert_eq(a, 0, "%s: %d HGMMA with A alone transposed", name, a);
        cr_assert_eq(w1, 2, "%s: %d waits with one group running", name, w1);
        cr_assert_eq(w0, 1, "%s: %d waits for every group", name, w0);
        cr_assert_eq(l, 0, "%s: %d local-memory instructions", name, l);
        kernels++;
    }
    cr_assert_eq(kernels, 8, "d = 64, 128; fp16, bf16; 2 builds: %d found", kernels);
}

Test(sass, step_6_ptxas_reports_no_serialized_wgmma_and_no_spills) {
    SKIP_IN_SANITIZED_PASS("it reads ptxas's reports, no host code");
    check_ptxas_reports("07_backward/6_wgmma.*.ptxas", 2, 8); /* timed and instrumented: 4 kernels each */
}
