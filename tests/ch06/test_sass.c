/* Chapter 06's machine code, read from ./ch06/run without a GPU (cuobjdump -sass): in every kernel of both builds
 * the products are HGMMA (wgmma), d/16 for S with both operands from shared memory and Bc/16 for O with V read
 * transposed (.tnspB), and nothing goes to local memory (no LDL, STL); the tma kernels copy with UTMALDG alone
 * (no LDGSTS, cp.async), one per 64-feature panel of Q_i, K_0, V_0 and of K_j+1, V_j+1; the wgmma kernels with none;
 * the warp_specialized kernels with one UTMALDG per panel of Q_i, K_j and V_j (the producer's loop), and one
 * register hand-over each way (USETMAXREG: DEALLOC in the producer, TRY_ALLOC in the consumers). Skips where
 * cuobjdump is not installed. */
#include "ch06_test.h"

Test(sass, products_are_hgmma_and_nothing_spills) {
    char out[16384], tool[1024];
    /* the CUDA toolkit's cuobjdump, else the one common/scripts/ensure-deps.sh installs with pip (where
     * provenance.py, which takes the kernels' digests, finds it) */
    if (run_command("PATH=\"$PATH:${CUDA:-/usr/local/cuda}/bin\"; command -v cuobjdump || "
                    "python3 common/scripts/provenance.py tools 2>/dev/null | awk '$1 == \"cuobjdump\" { print $2 }' | "
                    "grep .", tool, sizeof(tool)) != 0)
        cr_skip_test("cuobjdump is not installed here (CUDA toolkit, or pip's nvidia-cuda-cuobjdump)");
    tool[strcspn(tool, "\n")] = '\0';
    /* one line per kernel and build: name, HGMMA without and with .tnspB, LDL/STL */
    char cmd[2048];
    snprintf(cmd, sizeof(cmd), "'%s' -sass -arch sm_90a ch06/run | awk '"
        "function flush() { if (f ~ /flash_(wgmma|tma|warp_specialized)_kernel/) print f, s, o, l, a, t, r, g } "
        "/Function : / { flush(); f = $3; s = o = l = a = t = r = g = 0; next } "
        "/HGMMA/ { if (/tnspB/) o++; else s++ } /LDL|STL/ { l++ } /LDGSTS/ { a++ } /UTMALDG/ { t++ } "
        "/USETMAXREG.DEALLOC/ { r++ } /USETMAXREG.TRY_ALLOC/ { g++ } END { flush() }'", tool);
    cr_assert_eq(run_command(cmd, out, sizeof(out)), 0, "%s", out);
    int kernels = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        char name[256];
        int s, o, l, a, t, r, g;
        cr_assert_eq(sscanf(line, "%255s %d %d %d %d %d %d %d", name, &s, &o, &l, &a, &t, &r, &g), 8, "%s", line);
        int d = strstr(name, "ILi128E") ? 128 : 64, Bc = FA3_BC, Br = FA3_BR;
        const int ws = strstr(name, "flash_warp_specialized_kernel") != NULL;
        if (ws) /* _Z29flash_warp_specialized_kernelILi<D>ELi<BR>ELi<BC>E... */
            cr_assert_eq(sscanf(strstr(name, "kernelILi") + 9, "%dELi%dELi%dE", &d, &Br, &Bc), 3, "%s", name);
        const int panels = d / FA3_PANEL;
        cr_assert_eq(r, ws, "%s: %d USETMAXREG.DEALLOC", name, r);
        cr_assert_eq(g, ws, "%s: %d USETMAXREG.TRY_ALLOC", name, g);
        if (ws) {
            cr_assert(fa3_ws_tile_compiled(Br, Bc, d), "%s: a tile validation does not know", name);
            cr_assert_eq(a, 0, "%s: %d LDGSTS", name, a);
            cr_assert_eq(t, 3 * panels, "%s: %d UTMALDG, %d expected", name, t, 3 * panels);
        } else if (strstr(name, "flash_tma_kernel")) {
            cr_assert_eq(a, 0, "%s: %d LDGSTS", name, a);
            cr_assert_eq(t, 5 * panels, "%s: %d UTMALDG, %d expected", name, t, 5 * panels);
        } else {
            cr_assert_eq(t, 0, "%s: %d UTMALDG", name, t);
        }
        cr_assert_eq(s, d / 16, "%s: %d HGMMA for S, %d expected", name, s, d / 16);
        cr_assert_eq(o, Bc / 16, "%s: %d HGMMA .tnspB for O, %d expected", name, o, Bc / 16);
        cr_assert_eq(l, 0, "%s: %d local-memory instructions", name, l);
        kernels++;
    }
    cr_assert_eq(kernels, 36, "2 steps x 4 kernels (d = 64, 128; fp16, bf16) and warp_specialized's 10 (5 tiles, "
                              "fp16, bf16), in 2 builds: %d found", kernels);
}

/* ptxas's own report of every kernel, kept by the Makefile beside each object (OBJECT.ptxas): in every build folder
 * that has chapter 06's objects, the 8 reports (3 steps and ceiling.cu, timed and instrumented: the instrumented
 * ceiling.cu is empty) cover the 36 kernels and the ceiling's, none says
 * that wgmma instructions were serialized (ptxas's "Potential Performance Loss" notes, C7510-C7515: the pipeline
 * waiting on each wgmma, whatever the source's waits say), and none spills. Skips where no object was built here
 * (a test binary taken to another machine). */
Test(sass, ptxas_reports_no_serialized_wgmma_and_no_spills) {
    char out[4096];
    int folders = 0;
    const char *const builds[] = {"build", "build-san"};
    for (int b = 0; b < 2; b++) {
        char cmd[512];
        snprintf(cmd, sizeof(cmd), "ls %s/06_flash_v3/*.o.ptxas 2>/dev/null | wc -l", builds[b]);
        cr_assert_eq(run_command(cmd, out, sizeof(out)), 0, "%s", out);
        const int reports = atoi(out);
        if (reports == 0) continue;
        folders++;
        cr_assert_eq(reports, 8, "%s/06_flash_v3: %d ptxas reports, 8 expected (4 files, 2 builds)", builds[b], reports);
        snprintf(cmd, sizeof(cmd), "cat %s/06_flash_v3/*.o.ptxas | grep -c 'Compiling entry function'", builds[b]);
        cr_assert_eq(run_command(cmd, out, sizeof(out)), 0, "%s", out);
        cr_assert_eq(atoi(out), 37, "%s: %d kernels in the reports, 37 expected (and the ceiling's)", builds[b], atoi(out));
        snprintf(cmd, sizeof(cmd), "cat %s/06_flash_v3/*.o.ptxas | grep -E 'serialized|C75[0-9][0-9]'", builds[b]);
        cr_assert_neq(run_command(cmd, out, sizeof(out)), 0, "%s: ptxas says\n%s", builds[b], out);
        snprintf(cmd, sizeof(cmd),
                 "cat %s/06_flash_v3/*.o.ptxas | grep 'bytes spill' | grep -v ' 0 bytes spill stores, 0 bytes spill loads'",
                 builds[b]);
        cr_assert_neq(run_command(cmd, out, sizeof(out)), 0, "%s: spills\n%s", builds[b], out);
    }
    if (!folders) cr_skip_test("no ptxas reports here (build/06_flash_v3/*.o.ptxas): the objects were built elsewhere");
}
