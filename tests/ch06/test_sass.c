/* Chapter 06's machine code, read from ./ch06/run without a GPU (cuobjdump -sass): in every kernel of both builds
 * the products are HGMMA (wgmma), d/16 for S with both operands from shared memory and Bc/16 for O with V read
 * transposed (.tnspB), and nothing goes to local memory (no LDL, STL); the tma kernels copy with UTMALDG alone
 * (no LDGSTS, cp.async), one per 64-feature panel of Q_i, K_0, V_0 and of K_j+1, V_j+1; the wgmma kernels with none;
 * the warp_specialized kernels (and the pingpong and overlap ones, steps 4 and 5) with one UTMALDG per panel of
 * Q_i, K_j and V_j (the producer's loop), and one register hand-over each way (USETMAXREG: DEALLOC in the
 * producer, TRY_ALLOC in the consumers). The turns of steps 4 and 5 are named barriers of 256 threads (BAR.SYNC and
 * BAR.ARV with count 0x100): pingpong's two of each (the loop's, and the first and last hand-over), overlap's
 * four (the loop's, block 0's and the last block's), and steps 6-8's (zigzag, queue, tma_store) the same; only
 * overlap and the steps after it wait for all but the last wgmma group (WARPGROUP.DEPBAR.LE gsb0, 0x1: S done, P V
 * still running), and their products are there twice, the loop's and those peeled off before (S of block 0) and
 * after it (P V of the last block); only queue and tma_store have an atomic that returns a value (ATOMG: the claim of
 * the next item; the instrumented build's tallies are REDG, which return none); only tma_store stores by the copy
 * engine (UTMASTG: one per 64-feature panel of a consumer's rows of O_i) and has named barriers of 128 threads (two
 * BAR.SYNC with count 0x80: a consumer's rows of O_s free to be written, then written). Skips where cuobjdump is
 * not installed. */
#include "ch06_test.h"

Test(sass, products_are_hgmma_and_nothing_spills) {
    SKIP_IN_SANITIZED_PASS("it reads the machine code (cuobjdump, ptxas's reports), no host code");
    char out[16384], tool[1024];
    NEED_CUOBJDUMP(tool);
    /* one line per kernel and build: name, HGMMA without and with .tnspB, LDL/STL */
    char cmd[2048];
    snprintf(cmd, sizeof(cmd), "'%s' -sass -arch sm_90a ch06/run | awk '"
        "function flush() { if (f ~ /flash_(wgmma|tma|warp_specialized|pingpong|overlap|zigzag|queue|tma_store)_kernel/) "
        "print f, s, o, l, a, t, r, g, ns, na, w1, at, n1, st } "
        "/Function : / { flush(); f = $3; s = o = l = a = t = r = g = ns = na = w1 = at = n1 = st = 0; next } "
        "/HGMMA/ { if (/tnspB/) o++; else s++ } /LDL|STL/ { l++ } /LDGSTS/ { a++ } /UTMALDG/ { t++ } "
        "/USETMAXREG.DEALLOC/ { r++ } /USETMAXREG.TRY_ALLOC/ { g++ } /BAR.SYNC.*, 0x100 ;/ { ns++ } "
        "/BAR.ARV.*, 0x100 ;/ { na++ } /WARPGROUP.DEPBAR.LE gsb0, 0x1 ;/ { w1++ } /ATOMG/ { at++ } "
        "/BAR.SYNC.*, 0x80 ;/ { n1++ } /UTMASTG/ { st++ } "
        "END { flush() }'", tool);
    cr_assert_eq(run_command(cmd, out, sizeof(out)), 0, "%s", out);
    int kernels = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        char name[256];
        int s, o, l, a, t, r, g, ns, na, w1, at, n1, st;
        cr_assert_eq(sscanf(line, "%255s %d %d %d %d %d %d %d %d %d %d %d %d %d", name, &s, &o, &l, &a, &t, &r, &g, &ns,
                            &na, &w1, &at, &n1, &st), 14, "%s", line);
        int d = strstr(name, "ILi128E") ? 128 : 64, Bc = FA3_BC, Br = FA3_BR;
        const int pingpong = strstr(name, "flash_pingpong_kernel") != NULL;
        /* steps 6-8 (zigzag, queue, tma_store) are step 5's loop: the same instructions counted */
        const int tma_store = strstr(name, "flash_tma_store_kernel") != NULL;
        const int queue = strstr(name, "flash_queue_kernel") != NULL || tma_store;
        const int overlap = strstr(name, "flash_overlap_kernel") != NULL || strstr(name, "flash_zigzag_kernel") != NULL ||
                            queue;
        const int ws = strstr(name, "flash_warp_specialized_kernel") != NULL || pingpong || overlap;
        if (ws) /* _Z29flash_warp_specialized_kernelILi<D>ELi<BR>ELi<BC>E... */
            cr_assert_eq(sscanf(strstr(name, "kernelILi") + 9, "%dELi%dELi%dE", &d, &Br, &Bc), 3, "%s", name);
        const int turns = pingpong ? 2 : overlap ? 4 : 0, copies = overlap ? 2 : 1;
        cr_assert_eq(ns, turns, "%s: %d BAR.SYNC of 256 threads, %d expected", name, ns, turns);
        cr_assert_eq(na, turns, "%s: %d BAR.ARV of 256 threads, %d expected", name, na, turns);
        cr_assert_eq(w1, overlap, "%s: %d WARPGROUP.DEPBAR.LE gsb0, 0x1", name, w1);
        cr_assert_eq(at, queue, "%s: %d atomics on global memory", name, at);
        cr_assert_eq(n1, 2 * tma_store, "%s: %d BAR.SYNC of 128 threads", name, n1);
        const int panels = d / SW128_PANEL;
        cr_assert_eq(st, tma_store * panels, "%s: %d UTMASTG", name, st);
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
        cr_assert_eq(s, copies * d / 16, "%s: %d HGMMA for S, %d expected", name, s, copies * d / 16);
        cr_assert_eq(o, copies * Bc / 16, "%s: %d HGMMA .tnspB for O, %d expected", name, o, copies * Bc / 16);
        cr_assert_eq(l, 0, "%s: %d local-memory instructions", name, l);
        kernels++;
    }
    cr_assert_eq(kernels, 136, "2 steps x 4 kernels (d = 64, 128; fp16, bf16) and 6 steps x 10 (warp_specialized, "
                               "pingpong, overlap, zigzag, queue, tma_store: 5 tiles, fp16, bf16), in 2 builds: %d found",
                 kernels);
}

/* ptxas's own report of every kernel, kept by the Makefile beside each object (OBJECT.ptxas): in every build folder
 * that has chapter 06's objects, the 18 reports (8 steps and ceiling.cu, timed and instrumented: the instrumented
 * ceiling.cu is empty) cover the 136 kernels and the ceiling's, none says
 * that wgmma instructions were serialized (ptxas's "Potential Performance Loss" notes, C7510-C7515: the pipeline
 * waiting on each wgmma, whatever the source's waits say), and none spills. Skips where no object was built here
 * (a test binary taken to another machine). */
Test(sass, ptxas_reports_no_serialized_wgmma_and_no_spills) {
    SKIP_IN_SANITIZED_PASS("it reads the machine code (cuobjdump, ptxas's reports), no host code");
    check_ptxas_reports("06_flash_v3/*.o.ptxas", 18, 137); /* 9 files, 2 builds; the 136 kernels and the ceiling's */
}
