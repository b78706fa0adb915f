/* Steps 6 to 10's machine code, read from ./ch07/run without a GPU (cuobjdump -sass, once for all the tests:
 * hopper-sass.sh): in each of their kernels (d = 64, 128; fp16, bf16; both builds) the five products are HGMMA
 * (wgmma): d/16 each for S^T and dP^T with both operands K-major, Br/16 each for dV_j and dK_j with B read transposed
 * (.tnspB alone), Bc/16 for dQ_i with A and B read transposed (.tnspA and .tnspB); the warpgroup waits twice with one
 * group still running (WARPGROUP.DEPBAR.LE gsb0, 0x1: S^T done while dP^T runs, dP^T done while dV_j runs) and once
 * for all; nothing goes to local memory. Step 9 issues S^T in two places (before the loop, and for the next visit
 * at a visit's end), an empty group on the last visit (a 64x8x16 HGMMA of zeros), waits three times with one group
 * running and twice for all. Step 7's idea, the instructions around the products: S^T's first wgmma a few
 * instructions after the loop's barrier (step 6: hundreds, the mask's tests and the next copies before it) and S^T's
 * wgmma a few apart (step 6: a descriptor built between each two), in steps 8 and 9 too. Step 8's idea: dQ_i leaves
 * by the copy engine's bulk reductions (UBLKRED), no atomic from the threads (REDG), in its timed build (the
 * instrumented one adds with atomics, to count them); steps 6 and 7 the other way round; step 9 as step 8. Step 9's
 * idea: the next S^T is issued after dQ_i's product with no wait for every group between them; step 10 as step 9, but
 * for its wait for dK_j's and dV_j's products before dQ_i's is issued (three waits for all, two with one group
 * running). Step 10's idea: a producer warpgroup that gives its registers to the consumers (setmaxnreg), copies by
 * the copy engine (UTMALDG) and 4-byte cp.async reporting to an mbarrier, and one block-wide barrier, before the
 * warpgroups part; the others meet on named barriers. And ptxas's reports of the five files (OBJECT.ptxas, beside
 * each object) say no wgmma was serialized (C7510-C7519) and nothing spills; those of steps 11 and 12 (mma.sync)
 * that nothing spills in their timed build for sm_90 and that d = 64 fits two blocks per SM; and step 12's idea in
 * its machine code beside step 11's: S^T's and dP^T's first mma.sync with the zero register as C, fewer divergent
 * regions; step 13's timed build without spills, and its d = 128 kernels step 12's machine code.
 * Skips where cuobjdump is not installed, or no object was built here. */
#include "ch07_test.h"

/* The Hopper steps' kernels: steps 6 to 10, d = 64 and 128, fp16 and bf16, the timed and the instrumented build
 * (8 a step) */
#define KERNELS_PER_STEP 8
#define HOPPER_KERNELS (5 * KERNELS_PER_STEP)

/* A line a Hopper kernel (tc_wgmma_bwd .. tc_ws_bwd: d = 64, 128; fp16, bf16; both builds, in that order)
 * into out: its mangled name, then what an awk program over its machine code (hopper-sass.sh's file) prints: FIELDS,
 * after RESET at each function's start and RULES on each line. Skips where cuobjdump is not installed. */
static void hopper_report(const char *fields, const char *reset, const char *rules, char *out, size_t len) {
    char tool[1024], cmd[4096];
    NEED_CUOBJDUMP(tool);
    snprintf(cmd, sizeof(cmd), "f=$(bash tests/ch07/hopper-sass.sh '%s') && awk '"
             "function flush() { if (f ~ /tc_(wgmma|lean|bulk|ovl|ws)_bwd_kernel/) print f, %s } "
             "/Function : / { flush(); f = $3; %s; next } %s END { flush() }' \"$f\"", tool, fields, reset, rules);
    cr_assert_eq(run_command(cmd, out, len), 0, "%s", out);
}

Test(sass, steps_6_to_10_products_are_hgmma_with_partial_waits) {
    SKIP_IN_SANITIZED_PASS("it reads the machine code (cuobjdump), no host code");
    char out[8192];
    hopper_report("s, b, ab, a, z, w1, w0, l", "s = b = ab = a = z = w1 = w0 = l = 0",
                  "/HGMMA/ { if (/64x8x16/) z++; else if (/tnspA/ && /tnspB/) ab++; else if (/tnspB/) b++; "
                  "else if (/tnspA/) a++; else s++ } "
                  "/WARPGROUP.DEPBAR.LE gsb0, 0x1 ;/ { w1++ } /WARPGROUP.DEPBAR.LE gsb0, 0x0 ;/ { w0++ } "
                  "/LDL|STL/ { l++ }",
                  out, sizeof(out));
    int kernels = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        char name[256];
        int s, b, ab, a, z, w1, w0, l;
        cr_assert_eq(sscanf(line, "%255s %d %d %d %d %d %d %d %d", name, &s, &b, &ab, &a, &z, &w1, &w0, &l), 9, "%s",
                     line);
        const int d = strstr(name, "ILi128E") ? 128 : 64, step10 = strstr(name, "tc_ws_bwd") != NULL;
        const int step9 = strstr(name, "tc_ovl_bwd") != NULL || step10; /* step 10 issues S^T as step 9 does */
        cr_assert_eq(s, (2 + step9) * d / 16, "%s: %d HGMMA for S^T and dP^T, %d expected", name, s,
                     (2 + step9) * d / 16);
        cr_assert_eq(b, 2 * TC_WG_BR / 16, "%s: %d HGMMA .tnspB for dV, dK", name, b);
        cr_assert_eq(ab, TC_WG_BC / 16, "%s: %d HGMMA .tnspA .tnspB for dQ", name, ab);
        cr_assert_eq(a, 0, "%s: %d HGMMA with A alone transposed", name, a);
        cr_assert_eq(z, step9, "%s: %d empty groups' HGMMA", name, z);
        cr_assert_eq(w1, 2 + step9 - step10, "%s: %d waits with one group running", name, w1);
        cr_assert_eq(w0, 1 + step9 + step10, "%s: %d waits for every group", name, w0);
        cr_assert_eq(l, 0, "%s: %d local-memory instructions", name, l);
        kernels++;
    }
    cr_assert_eq(kernels, HOPPER_KERNELS, "5 steps; d = 64, 128; fp16, bf16; 2 builds: %d found", kernels);
}

/* In each kernel: the instructions from the loop's first barrier (the top of the visit of Q_i) to S^T's first HGMMA,
 * and the most between two of the visit's first eight HGMMA (S^T's, then dP^T's at d = 64; step 9: S^T's alone,
 * issued before the loop, whose barrier is the first; the compiler computes Q_i's descriptor after it, uniform-register
 * arithmetic it could have done before; step 10: from the consumers' wait for the first Q_i's mbarrier, the last wait
 * before S^T). */
Test(sass, steps_7_to_10_issue_the_products_with_few_instructions_between) {
    SKIP_IN_SANITIZED_PASS("it reads the machine code (cuobjdump), no host code");
    char out[8192];
    hopper_report("first, gap", "i = n = gap = 0; bar = first = -1; lim = f ~ /tc_(ovl|ws)/ && f ~ /ILi64E/ ? 4 : 8",
                  "/^ +[/][*][0-9a-f]+[*][/]/ { i++ } /BAR.SYNC/ && bar < 0 { bar = i } "
                  "/SYNCS.PHASECHK/ && f ~ /tc_ws/ && first < 0 { bar = i } "
                  "/HGMMA/ { n++; if (first < 0 && bar >= 0) first = i - bar - 1; "
                  "if (n > 1 && n <= lim && i - last - 1 > gap) gap = i - last - 1; last = i }",
                  out, sizeof(out));
    int kernels[2] = {0, 0}; /* step 6's, steps 7 to 10's */
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        char name[256];
        int first, gap;
        cr_assert_eq(sscanf(line, "%255s %d %d", name, &first, &gap), 3, "%s", line);
        cr_assert_geq(first, 0, "%s: no barrier before the first HGMMA", name);
        if (!strstr(name, "tc_wgmma_bwd")) {
            /* steps 9 and 10: Q_i's descriptor after the barrier */
            const int most = strstr(name, "tc_ovl_bwd") || strstr(name, "tc_ws_bwd") ? 24 : 16;
            cr_assert_leq(first, most, "%s: %d instructions from the barrier to S^T's first HGMMA", name, first);
            /* step 10: between the first two, its uniform datapath builds the other descriptors of the block's first
             * S^T (about 20 UIADD3 and UMOV, once a block) */
            const int apart = strstr(name, "tc_ws_bwd") ? 24 : 12;
            cr_assert_leq(gap, apart, "%s: %d instructions between two HGMMA of S^T", name, gap);
            kernels[1]++;
        } else {
            cr_assert_geq(first, 200, "%s: step 6, %d instructions from the barrier to S^T's first HGMMA", name,
                          first);
            kernels[0]++;
        }
    }
    cr_assert(kernels[0] == KERNELS_PER_STEP && kernels[1] == HOPPER_KERNELS - KERNELS_PER_STEP,
              "step 6: %d kernels, steps 7 to 10: %d", kernels[0], kernels[1]);
}

/* The bulk reductions (UBLKRED) and the threads' global reductions (REDG) in each kernel of steps 6 to 10; the timed
 * build's kernel is the first of a name, the instrumented one's the second (#2 in a digest: sass-digest's order). And
 * no waterfall loop (BRA.U.ANY: the compiler's way of issuing an instruction whose operands must be uniform once per
 * distinct value among the lanes) in steps 8 to 10: the elected lane's operands are uniform. */
Test(sass, steps_8_to_10_add_dq_by_bulk_reductions) {
    SKIP_IN_SANITIZED_PASS("it reads the machine code (cuobjdump), no host code");
    char out[8192];
    hopper_report("++seen[f], bulk, red, any", "bulk = red = any = 0",
                  "/UBLKRED/ { bulk++ } /REDG/ { red++ } /BRA.U.ANY/ { any++ }", out, sizeof(out));
    int kernels = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        char name[256];
        int copy, bulk, red, any;
        cr_assert_eq(sscanf(line, "%255s %d %d %d %d", name, &copy, &bulk, &red, &any), 5, "%s", line);
        const int timed = copy == 1;
        if ((strstr(name, "tc_bulk_bwd") || strstr(name, "tc_ovl_bwd") || strstr(name, "tc_ws_bwd")) && timed) {
            /* one lane's loop over its warp's rows, in the visits and after the last (as the compiler unrolls it) */
            cr_assert_geq(bulk, 2, "%s: %d bulk reductions", name, bulk);
            cr_assert_eq(red, 0, "%s: %d atomics from the threads", name, red);
            cr_assert_eq(any, 0, "%s: %d waterfall loops", name, any);
        } else {
            cr_assert_eq(bulk, 0, "%s (%s build): %d bulk reductions", name, timed ? "timed" : "instrumented", bulk);
            cr_assert_gt(red, 0, "%s (%s build): no atomics", name, timed ? "timed" : "instrumented");
        }
        kernels++;
    }
    cr_assert_eq(kernels, HOPPER_KERNELS, "5 steps; d = 64, 128; fp16, bf16; 2 builds: %d found", kernels);
}

/* Step 9's idea in its machine code: after dQ_i's product (its last HGMMA .tnspA) the next visit's S^T is issued (a
 * plain HGMMA) with no wait for every group between them (WARPGROUP.DEPBAR.LE gsb0, 0x0), so that dQ_i's product is
 * still running; the same in step 10; in steps 6 to 8 no product follows dQ_i's in the code: the loop waits for it and
 * starts over. */
Test(sass, steps_9_and_10_issue_the_next_s_behind_dq) {
    SKIP_IN_SANITIZED_PASS("it reads the machine code (cuobjdump), no host code");
    char out[8192];
    hopper_report("nxt, waits", "dq = nxt = waits = 0",
                  "/HGMMA/ && /tnspA/ { dq = 1; nxt = waits = 0; next } "
                  "dq && /WARPGROUP.DEPBAR.LE gsb0, 0x0 ;/ && !nxt { waits++ } "
                  "dq && /HGMMA/ && !/tnsp/ && !/64x8x16/ && !nxt { nxt = 1 }",
                  out, sizeof(out));
    int kernels = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        char name[256];
        int next, waits;
        cr_assert_eq(sscanf(line, "%255s %d %d", name, &next, &waits), 3, "%s", line);
        if (strstr(name, "tc_ovl_bwd") || strstr(name, "tc_ws_bwd")) {
            cr_assert_eq(next, 1, "%s: no S^T after dQ_i's product", name);
            cr_assert_eq(waits, 0, "%s: %d waits for every group between dQ_i's product and the next S^T", name, waits);
        } else {
            cr_assert_eq(next, 0, "%s: a product after dQ_i's", name);
        }
        kernels++;
    }
    cr_assert_eq(kernels, HOPPER_KERNELS, "5 steps; d = 64, 128; fp16, bf16; 2 builds: %d found", kernels);
}

Test(sass, steps_6_to_10_ptxas_reports_no_serialized_wgmma_and_no_spills) {
    SKIP_IN_SANITIZED_PASS("it reads ptxas's reports, no host code");
    check_ptxas_reports("07_backward/6_wgmma.*.ptxas", 2, KERNELS_PER_STEP); /* timed and instrumented: 4 kernels each */
    check_ptxas_reports("07_backward/7_lean_loop.*.ptxas", 2, KERNELS_PER_STEP);
    check_ptxas_reports("07_backward/8_dq_bulk.*.ptxas", 2, KERNELS_PER_STEP);
    check_ptxas_reports("07_backward/9_dq_overlap.*.ptxas", 2, KERNELS_PER_STEP);
    check_ptxas_reports("07_backward/10_warp_specialized.*.ptxas", 2, KERNELS_PER_STEP);
}

/* Step 10's idea in its machine code, in each of its kernels: the producer's registers handed back
 * (USETMAXREG.DEALLOC to 24, 0x18) and the consumers' taken (USETMAXREG.TRY_ALLOC to 240, 0xf0); Q_i, dO_i, K_j and V_j
 * copied by the copy engine, a box per 64-feature panel (UTMALDG: d/64 per tile, four tiles) and no 16-byte cp.async
 * (LDGSTS.E.128); in the timed build L_i and D_i by 4-byte cp.async (LDGSTS.E) whose landing arrives on the stage's
 * mbarrier (ARRIVES.LDGSTSBAR), in the instrumented one neither (it loads them through registers, to count them); one
 * block-wide barrier (BAR.SYNC 0x0, after the mbarriers' initialisation), and the loop's three named barriers: the
 * consumers' (0x1, 256 threads) and the two they share with the producer's warp 1 (288 threads): 0x2, arrived at by the
 * consumers and waited on by the warp, and 0x3, waited on by both (barrier.sync, unaligned: the same BAR.SYNC) and
 * arrived at by neither. In steps 6 to 9 none of these. */
Test(sass, step_10_splits_the_block_into_a_producer_and_consumers) {
    SKIP_IN_SANITIZED_PASS("it reads the machine code (cuobjdump), no host code");
    char out[8192];
    hopper_report("++seen[f], dec, inc, tma, c16, c4, arv, b0, b1, b2a, b2s, b3a, b3s",
                  "dec = inc = tma = c16 = c4 = arv = b0 = b1 = b2a = b2s = b3a = b3s = 0",
                  "/USETMAXREG.DEALLOC.CTAPOOL 0x18 ;/ { dec++ } /USETMAXREG.TRY_ALLOC.CTAPOOL UP0, 0xf0 ;/ { inc++ } "
                  "/UTMALDG/ { tma++ } /LDGSTS[^ ]*[.]128/ { c16++; next } /LDGSTS.E / { c4++ } /ARRIVES.LDGSTSBAR/ { arv++ } "
                  "/BAR.SYNC.DEFER_BLOCKING 0x0 ;/ { b0++ } /BAR.SYNC.DEFER_BLOCKING 0x1, 0x100 ;/ { b1++ } "
                  "/BAR.ARV 0x2, 0x120 ;/ { b2a++ } /BAR.SYNC.DEFER_BLOCKING 0x2, 0x120 ;/ { b2s++ } "
                  "/BAR.ARV 0x3, 0x120 ;/ { b3a++ } /BAR.SYNC.DEFER_BLOCKING 0x3, 0x120 ;/ { b3s++ }",
                  out, sizeof(out));
    int kernels = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        char name[256];
        int copy, dec, inc, tma, c16, c4, arv, b0, b1, b2a, b2s, b3a, b3s;
        cr_assert_eq(sscanf(line, "%255s %d %d %d %d %d %d %d %d %d %d %d %d %d", name, &copy, &dec, &inc, &tma, &c16,
                            &c4, &arv, &b0, &b1, &b2a, &b2s, &b3a, &b3s),
                     14, "%s", line);
        if (strstr(name, "tc_ws_bwd")) {
            const int d = strstr(name, "ILi128E") ? 128 : 64, timed = copy == 1;
            cr_assert(dec == 1 && inc == 1, "%s: setmaxnreg to 24 %d times, to 240 %d times", name, dec, inc);
            cr_assert_eq(tma, 4 * d / 64, "%s: %d UTMALDG, %d expected (d/64 boxes of 4 tiles)", name, tma, 4 * d / 64);
            cr_assert_eq(c16, 0, "%s: %d 16-byte cp.async", name, c16);
            if (timed) cr_assert(c4 > 0 && arv == 1, "%s: %d 4-byte cp.async, %d arrivals on their landing", name, c4, arv);
            else cr_assert(c4 == 0 && arv == 0, "%s (instrumented): %d cp.async, %d arrivals", name, c4, arv);
            cr_assert_eq(b0, 1, "%s: %d block-wide barriers", name, b0);
            cr_assert(b1 >= 1 && b2a >= 1 && b2s >= 1 && b3a == 0 && b3s >= 2,
                      "%s: named barriers 1 (sync) %d, 2 (arrive, sync) %d %d, 3 (arrive, sync) %d %d", name, b1, b2a,
                      b2s, b3a, b3s);
        } else {
            cr_assert(dec + inc + tma + arv + b1 + b2a + b2s + b3a + b3s == 0,
                      "%s: a step before 10 with step 10's instructions: %s", name, line);
        }
        kernels++;
    }
    cr_assert_eq(kernels, HOPPER_KERNELS, "5 steps; d = 64, 128; fp16, bf16; 2 builds: %d found", kernels);
}

/* Steps 11 and 12 in ptxas's reports of their timed build for sm_90, the GPU the book measures on: nothing spills, and
 * at d = 64 a thread fits in 128 registers, so that two blocks of 256 threads share an SM's 65,536 (their
 * __launch_bounds__; step 5's point, which they keep). For sm_75 to sm_89 ptxas makes other choices under the same
 * bound (at d = 64 step 5 spills there too); the instrumented build, which counts bytes and is never timed, spills at
 * d = 64 (as steps 4 and 5 do). */
Test(sass, steps_11_and_12_fit_two_blocks_at_d64_without_spilling) {
    SKIP_IN_SANITIZED_PASS("it reads ptxas's reports, no host code");
    char out[4096];
    const char *const cmd =
        "cat build/07_backward/11_warp_tiles.cu.o.ptxas build/07_backward/12_lean_tiles.cu.o.ptxas 2>/dev/null | "
        "awk '/Compiling entry function/ { sm90 = /for .sm_90.$/; n += sm90; d64 = /ILi64E/ } "
        "sm90 && /bytes spill/ && !/ 0 bytes spill stores, 0 bytes spill loads/ { bad++ } "
        "sm90 && /Used [0-9]+ registers/ { match($0, /Used [0-9]+/); "
        "if (d64 && substr($0, RSTART + 5, RLENGTH - 5) + 0 > 128) bad++ } END { print n + 0, bad + 0 }'";
    cr_assert_eq(run_command(cmd, out, sizeof(out)), 0, "%s", out);
    int kernels = 0, bad = 0;
    cr_assert_eq(sscanf(out, "%d %d", &kernels, &bad), 2, "%s", out);
    if (kernels == 0)
        cr_skip_test("no sm_90 ptxas reports of steps 11 and 12 here (built elsewhere, or for other GPUs)");
    cr_assert_eq(kernels, 8, "%d kernels: 2 steps x (d = 64, 128) x (fp16, bf16)", kernels);
    cr_assert_eq(bad, 0, "%d reports of a spill, or of more than 128 registers at d = 64", bad);
}

/* Two mma.sync steps side by side in their machine code (sm_90), for a test of the second step's idea: AWK, an awk
 * program over hopper-sass.sh's file TAG of the kernels whose names match PATTERN (a grep regex), prints a line for
 * each kernel it counts, its name and NCOL counts, and they land in counts[step][d][type][column]: step 1 where the
 * name contains SECOND (the later step's kernel), d = 64 or 128, type fp16 or bf16. STEPS names the two steps in
 * messages. Skips where cuobjdump is not installed or the program has no sm_90 code; fails unless the awk program
 * counted 8 kernels, 2 steps x (d = 64, 128) x (fp16, bf16) (it sums a kernel's two builds, or keeps one). */
#define MAX_COUNTS 3
typedef int StepCounts[2][2][2][MAX_COUNTS];
static void step_pair_counts(const char *pattern, const char *tag, const char *awk, const char *second,
                             const char *steps, int ncol, StepCounts counts) {
    cr_assert(ncol >= 1 && ncol <= MAX_COUNTS, "%d counts a kernel: StepCounts holds 1 to %d", ncol, MAX_COUNTS);
    char tool[1024], cmd[4096], out[4096];
    NEED_CUOBJDUMP(tool);
    snprintf(cmd, sizeof(cmd),
             "f=$(bash tests/ch07/hopper-sass.sh '%s' sm_90 '%s' %s 2>&1) || { echo \"$f\"; exit 1; }; awk '%s' \"$f\"",
             tool, pattern, tag, awk);
    const int rc = run_command(cmd, out, sizeof(out));
    if (rc != 0 && strstr(out, "no sm_90 kernel in ch07/run"))
        cr_skip_test("no sm_90 code of steps %s in ch07/run (built for other GPUs)", steps);
    cr_assert_eq(rc, 0, "%s", out);
    memset(counts, 0, sizeof(StepCounts));
    int kernels = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        char name[256];
        int used = 0;
        cr_assert_eq(sscanf(line, "%255s%n", name, &used), 1, "%s", line);
        const int step = strstr(name, second) != NULL, d = strstr(name, "ILi128E") != NULL,
                  t = strstr(name, "bfloat16") != NULL;
        const char *p = line + used;
        for (int c = 0; c < ncol; c++) {
            char *end;
            counts[step][d][t][c] = (int)strtol(p, &end, 10);
            cr_assert_neq(end, p, "%d counts expected: %s", ncol, line);
            p = end;
        }
        kernels++;
    }
    cr_assert_eq(kernels, 8, "steps %s x (d = 64, 128) x (fp16, bf16): %d kernels counted", steps, kernels);
}

/* Step 12's idea in its machine code (sm_90, both builds of each kernel summed), against step 11's at the same d and
 * storage type: S^T's and dP^T's first k16 step with no accumulator in, 16 `mma.sync` a kernel whose C is the zero
 * register (2 products x 2 m16 tiles x 32 queries / 8: HMMA ... RZ) on top of the ones the compiler already folds;
 * and the per-score mask gone from the unmasked warps' copy of the scores, fewer than half step 11's divergent
 * regions (BSSY: the compiler opens one for each branch that may diverge). The code from hopper-sass.sh (sm_90,
 * build/ch07_tiles.sass). Skips where cuobjdump is not installed or the program has no sm_90 code. */
Test(sass, step_12_zeroes_nothing_and_branches_on_the_mask_once) {
    SKIP_IN_SANITIZED_PASS("it reads the machine code (cuobjdump), no host code");
    enum { RZ, BSSY };
    StepCounts n; /* [step 11, 12][d 64, 128][fp16, bf16][RZ, BSSY] */
    step_pair_counts("tc_tile[a-z_]*_bwd_kernel", "tiles",
                     "/Function : / { f = $3; seen[f] } /HMMA/ && / RZ/ { rz[f]++ } /BSSY/ { b[f]++ } "
                     "END { for (f in seen) print f, rz[f] + 0, b[f] + 0 }",
                     "tc_tile_lean_bwd", "11 and 12", 2, n);
    for (int d = 0; d < 2; d++)
        for (int t = 0; t < 2; t++) {
            cr_assert_geq(n[1][d][t][RZ] - n[0][d][t][RZ], 2 * 16,
                          "d = %d, %s: HMMA with C = RZ: step 12 %d, step 11 %d", 64 << d, t ? "bf16" : "fp16",
                          n[1][d][t][RZ], n[0][d][t][RZ]);
            cr_assert_lt(2 * n[1][d][t][BSSY], n[0][d][t][BSSY], "d = %d, %s: BSSY: step 12 %d, step 11 %d", 64 << d,
                         t ? "bf16" : "fp16", n[1][d][t][BSSY], n[0][d][t][BSSY]);
        }
}

/* In ptxas's report of a step's timed build (build/07_backward/FILE.cu.o.ptxas), the entry functions compiled for
 * sm_90 (*kernels: 0 where the report is missing or has none) and how many of them spill (*spills). */
static void sm90_spills(const char *file, int *kernels, int *spills) {
    char cmd[1024], out[256];
    snprintf(cmd, sizeof(cmd),
             "awk '/Compiling entry function/ { sm90 = /for .sm_90.$/; n += sm90 } sm90 && /bytes spill/ && "
             "!/ 0 bytes spill stores, 0 bytes spill loads/ { bad++ } END { print n + 0, bad + 0 }' "
             "build/07_backward/%s.cu.o.ptxas 2>/dev/null",
             file);
    cr_assert_eq(run_command(cmd, out, sizeof(out)), 0, "%s", out);
    cr_assert_eq(sscanf(out, "%d %d", kernels, spills), 2, "%s", out);
}

/* Step 13 in ptxas's report of its timed build for sm_90: nothing spills at either d (one block per SM: at d = 64 the
 * fragments of K_j and V_j it holds take 64 of a thread's 255 registers). */
Test(sass, step_13_holds_its_fragments_without_spilling) {
    SKIP_IN_SANITIZED_PASS("it reads ptxas's reports, no host code");
    int kernels = 0, bad = 0;
    sm90_spills("13_kv_registers", &kernels, &bad);
    if (kernels == 0) cr_skip_test("no sm_90 ptxas report of step 13 here (built elsewhere, or for other GPUs)");
    cr_assert_eq(kernels, 4, "%d kernels: d = 64, 128 x fp16, bf16", kernels);
    cr_assert_eq(bad, 0, "%d reports of a spill", bad);
}

/* At d = 128 step 13 has no registers to spend and is step 12's kernel: the same instructions (sm_90, each build),
 * the addresses, encodings and labels aside. The code from hopper-sass.sh (build/ch07_kvreg.sass). */
Test(sass, step_13_at_d128_is_step_12s_machine_code) {
    SKIP_IN_SANITIZED_PASS("it reads the machine code (cuobjdump), no host code");
    char tool[1024], cmd[4096], out[4096];
    NEED_CUOBJDUMP(tool);
    snprintf(cmd, sizeof(cmd),
             "f=$(bash tests/ch07/hopper-sass.sh '%s' sm_90 'tc_\\(tile_lean\\|kvreg\\)_bwd_kernelILi128E' kvreg 2>&1) "
             "|| { echo \"$f\"; exit 1; }; awk '/Function : / { f = $3; k = f \"#\" ++n[f]; s = k; "
             "sub(/_Z[0-9]+tc_(tile_lean|kvreg)_bwd/, \"\", s); which[k] = (k ~ /kvreg/) } "
             "/^ +\\/\\*[0-9a-f]+\\*\\/ / { l = $0; sub(/^ +\\/\\*[0-9a-f]+\\*\\/ +/, \"\", l); "
             "sub(/ *\\/\\* 0x[0-9a-f]+ \\*\\/ *$/, \"\", l); gsub(/\\.L_x_[0-9]+/, \"L\", l); "
             "if (which[k]) a[s] = a[s] l \";\"; else b[s] = b[s] l \";\" } "
             "END { for (s in a) { pairs++; same += (a[s] == b[s] && a[s] != \"\") } print pairs + 0, same + 0 }' \"$f\"",
             tool);
    const int rc = run_command(cmd, out, sizeof(out));
    if (rc != 0 && strstr(out, "no sm_90 kernel in ch07/run"))
        cr_skip_test("no sm_90 code of steps 12 and 13 in ch07/run (built for other GPUs)");
    cr_assert_eq(rc, 0, "%s", out);
    int pairs = 0, same = 0;
    cr_assert_eq(sscanf(out, "%d %d", &pairs, &same), 2, "%s", out);
    cr_assert_eq(pairs, 4, "fp16, bf16 x timed, counted builds: %d found", pairs);
    cr_assert_eq(same, pairs, "%d of %d pairs of kernels differ", pairs - same, pairs);
}

/* Step 14's idea in its machine code (sm_90, both builds of each kernel summed), against step 13's at the same d and
 * storage type: no SHFL left (step 13: dQ's quad swap, 2 per n8 tile of its strip); twice the RED (8-byte atomics
 * for 16-byte ones) in two copies, so four times step 13's: whole query blocks add their 2 NQ = 16 pairs a lane in one
 * run of 16 REDG with no instruction between (no row test, no branch), the others test each row; and, in ptxas's
 * report of its timed build, no spills. The code from hopper-sass.sh (build/ch07_pairs.sass). */
Test(sass, step_14_adds_dq_without_shuffles) {
    SKIP_IN_SANITIZED_PASS("it reads the machine code (cuobjdump, ptxas's reports), no host code");
    enum { SHFL, RED, RUN };
    StepCounts n; /* [step 13, 14][d 64, 128][fp16, bf16][SHFL, RED, longest run of REDG] */
    step_pair_counts("tc_\\(kvreg\\|pairs\\)_bwd_kernel", "pairs",
                     "/Function : / { f = $3; seen[f] } /SHFL/ { sh[f]++ } /REDG\\.E\\.ADD\\.F32/ { red[f]++ } "
                     "/\\/\\*[0-9a-f]+\\*\\// { run = /REDG/ ? run + 1 : 0; if (run > most[f]) most[f] = run } "
                     "END { for (f in seen) print f, sh[f] + 0, red[f] + 0, most[f] + 0 }",
                     "tc_pairs_bwd", "13 and 14", 3, n);
    int reports = 0, spills = 0;
    sm90_spills("14_dq_pairs", &reports, &spills);
    cr_assert_eq(spills, 0, "%d of step 14's sm_90 reports spill", spills);
    for (int d = 0; d < 2; d++)
        for (int t = 0; t < 2; t++) {
            cr_assert_gt(n[0][d][t][SHFL], 0, "d = %d: step 13 has no SHFL", 64 << d);
            cr_assert_eq(n[1][d][t][SHFL], 0, "d = %d, %s: step 14 has %d SHFL", 64 << d, t ? "bf16" : "fp16",
                         n[1][d][t][SHFL]);
            cr_assert_eq(n[1][d][t][RED], 4 * n[0][d][t][RED], "d = %d, %s: RED: step 14 %d, step 13 %d", 64 << d,
                         t ? "bf16" : "fp16", n[1][d][t][RED], n[0][d][t][RED]);
            cr_assert_geq(n[1][d][t][RUN], 16,
                          "d = %d, %s: step 14's longest run of REDG is %d, not a whole block's 16", 64 << d,
                          t ? "bf16" : "fp16", n[1][d][t][RUN]);
        }
}

/* Step 15's idea in its machine code (sm_90, both builds of each kernel summed), against step 13's at the same d and
 * storage type: dQ by 16-byte atomics again (REDG.E.ADD.F32x4 only, in two copies: whole query blocks and the others,
 * so twice step 13's) and still no SHFL; and, in ptxas's report of its timed build, no spills. The code from
 * hopper-sass.sh (build/ch07_quads.sass). */
Test(sass, step_15_adds_dq_in_fours_without_shuffles) {
    SKIP_IN_SANITIZED_PASS("it reads the machine code (cuobjdump, ptxas's reports), no host code");
    enum { SHFL, RED, RED4 };
    StepCounts n; /* [step 13, 15][d 64, 128][fp16, bf16][SHFL, RED, 16-byte RED] */
    step_pair_counts("tc_\\(kvreg\\|quads\\)_bwd_kernel", "quads",
                     "/Function : / { f = $3; seen[f] } /SHFL/ { sh[f]++ } "
                     "/REDG\\.E\\.ADD\\.F32x4/ { red4[f]++ } /REDG\\.E\\.ADD\\.F32/ { red[f]++ } "
                     "END { for (f in seen) print f, sh[f] + 0, red[f] + 0, red4[f] + 0 }",
                     "tc_quads_bwd", "13 and 15", 3, n);
    int reports = 0, spills = 0;
    sm90_spills("15_dq_quads", &reports, &spills);
    cr_assert_eq(spills, 0, "%d of step 15's sm_90 reports spill", spills);
    for (int d = 0; d < 2; d++)
        for (int t = 0; t < 2; t++) {
            const char *ty = t ? "bf16" : "fp16";
            cr_assert_gt(n[0][d][t][RED4], 0, "d = %d, %s: step 13 has no 16-byte RED", 64 << d, ty);
            cr_assert_eq(n[1][d][t][SHFL], 0, "d = %d, %s: step 15 has %d SHFL", 64 << d, ty, n[1][d][t][SHFL]);
            cr_assert_eq(n[1][d][t][RED4], n[1][d][t][RED], "d = %d, %s: step 15 has %d RED, %d of them 16-byte",
                         64 << d, ty, n[1][d][t][RED], n[1][d][t][RED4]);
            cr_assert_eq(n[1][d][t][RED], 2 * n[0][d][t][RED], "d = %d, %s: RED: step 15 %d, step 13 %d", 64 << d, ty,
                         n[1][d][t][RED], n[0][d][t][RED]);
        }
}

/* Step 16's idea in its machine code (sm_90), in the timed build of each kernel (the one that copies by cp.async:
 * LDGSTS.E.BYPASS.128), against step 15's at the same d and storage type: step 15's loads of L_i and D_i into
 * registers (LDG, 4 bytes) are 4-byte copies to shared memory (LDGSTS.E) instead, as many, and no LDG is left; and,
 * in ptxas's report of its timed build, no spills. The code from hopper-sass.sh (build/ch07_stats.sass). */
Test(sass, step_16_copies_L_and_D_without_loads) {
    SKIP_IN_SANITIZED_PASS("it reads the machine code (cuobjdump, ptxas's reports), no host code");
    enum { LDG, COPY4 };
    StepCounts n; /* [step 15, 16][d 64, 128][fp16, bf16][LDG, 4-byte LDGSTS], the timed builds */
    step_pair_counts("tc_\\(quads\\|stats\\)_bwd_kernel", "stats",
                     "/Function : / { k = $3 \"#\" ++n[$3]; seen[k] } "
                     "/LDGSTS\\.E\\.BYPASS\\.128/ { timed[k]++ } /LDGSTS\\.E \\[/ { c4[k]++ } / LDG\\./ { ldg[k]++ } "
                     "END { for (k in seen) if (timed[k]) print k, ldg[k] + 0, c4[k] + 0 }",
                     "tc_stats_bwd", "15 and 16", 2, n);
    int reports = 0, spills = 0;
    sm90_spills("16_stat_copies", &reports, &spills);
    cr_assert_eq(spills, 0, "%d of step 16's sm_90 reports spill", spills);
    for (int d = 0; d < 2; d++)
        for (int t = 0; t < 2; t++) {
            const char *ty = t ? "bf16" : "fp16";
            cr_assert_gt(n[0][d][t][LDG], 0, "d = %d, %s: step 15 loads nothing into registers", 64 << d, ty);
            cr_assert_eq(n[0][d][t][COPY4], 0, "d = %d, %s: step 15 has %d 4-byte copies", 64 << d, ty,
                         n[0][d][t][COPY4]);
            cr_assert_eq(n[1][d][t][LDG], 0, "d = %d, %s: step 16 has %d LDG", 64 << d, ty, n[1][d][t][LDG]);
            cr_assert_eq(n[1][d][t][COPY4], n[0][d][t][LDG],
                         "d = %d, %s: 4-byte copies: step 16 %d, step 15's loads %d", 64 << d, ty, n[1][d][t][COPY4],
                         n[0][d][t][LDG]);
        }
}

/* Step 17's idea in its machine code (sm_90), both builds of each kernel, against step 16's at the same d and storage
 * type: 8 ldmatrix fewer a build (dQ_i's product, unrolled whole: 4 instead of 5 at each of its 8 k16 steps), the
 * same mma.sync and the same 16-byte atomics; and, in ptxas's report of its timed build, no spills. The code from
 * hopper-sass.sh (build/ch07_squares.sass). */
Test(sass, step_17_loads_8_fragments_fewer_for_dq) {
    SKIP_IN_SANITIZED_PASS("it reads the machine code (cuobjdump, ptxas's reports), no host code");
    enum { LDSM, HMMA, RED4 };
    StepCounts n; /* [step 16, 17][d 64, 128][fp16, bf16][LDSM, HMMA, 16-byte RED], the two builds together */
    step_pair_counts("tc_\\(stats\\|squares\\)_bwd_kernel", "squares",
                     "/Function : / { f = $3; seen[f] } /LDSM/ { ld[f]++ } /HMMA/ { mma[f]++ } "
                     "/REDG\\.E\\.ADD\\.F32x4/ { red4[f]++ } "
                     "END { for (f in seen) print f, ld[f] + 0, mma[f] + 0, red4[f] + 0 }",
                     "tc_squares_bwd", "16 and 17", 3, n);
    int reports = 0, spills = 0;
    sm90_spills("17_dq_squares", &reports, &spills);
    cr_assert_eq(spills, 0, "%d of step 17's sm_90 reports spill", spills);
    for (int d = 0; d < 2; d++)
        for (int t = 0; t < 2; t++) {
            const char *ty = t ? "bf16" : "fp16";
            cr_assert_gt(n[0][d][t][LDSM], 0, "d = %d, %s: step 16 has no LDSM", 64 << d, ty);
            cr_assert_eq(n[1][d][t][LDSM], n[0][d][t][LDSM] - 2 * 8, "d = %d, %s: LDSM: step 17 %d, step 16 %d",
                         64 << d, ty, n[1][d][t][LDSM], n[0][d][t][LDSM]);
            cr_assert_gt(n[0][d][t][HMMA], 0, "d = %d, %s: step 16 has no HMMA", 64 << d, ty);
            cr_assert_eq(n[1][d][t][HMMA], n[0][d][t][HMMA], "d = %d, %s: HMMA: step 17 %d, step 16 %d", 64 << d, ty,
                         n[1][d][t][HMMA], n[0][d][t][HMMA]);
            cr_assert_gt(n[0][d][t][RED4], 0, "d = %d, %s: step 16 has no 16-byte RED", 64 << d, ty);
            cr_assert_eq(n[1][d][t][RED4], n[0][d][t][RED4], "d = %d, %s: 16-byte RED: step 17 %d, step 16 %d",
                         64 << d, ty, n[1][d][t][RED4], n[0][d][t][RED4]);
        }
}

/* Step 18's idea in its machine code (sm_90), both builds of each kernel, against step 17's at the same d and storage
 * type: its P_ij^T and dS_ij^T stores are STSM (stmatrix.x4, 4 pairs a lane each), so step 17's 4-byte STS are fewer
 * by 4 for each STSM (32 a build at d = 128, 64 at d = 64: 8 and 16 STSM), nothing else stored differently, the same
 * LDSM; and, in ptxas's report of its timed build, no spills. The code from hopper-sass.sh
 * (build/ch07_stores.sass). */
Test(sass, step_18_stores_p_and_ds_by_stmatrix) {
    SKIP_IN_SANITIZED_PASS("it reads the machine code (cuobjdump, ptxas's reports), no host code");
    enum { STS, STSM, LDSM };
    StepCounts n; /* [step 17, 18][d 64, 128][fp16, bf16][STS, STSM, LDSM], the two builds together */
    step_pair_counts("tc_\\(squares\\|stores\\)_bwd_kernel", "stores",
                     "/Function : / { f = $3; seen[f] } / STS / { st[f]++ } / STSM\\./ { stm[f]++ } "
                     "/LDSM/ { ld[f]++ } END { for (f in seen) print f, st[f] + 0, stm[f] + 0, ld[f] + 0 }",
                     "tc_stores_bwd", "17 and 18", 3, n);
    int reports = 0, spills = 0;
    sm90_spills("18_matrix_stores", &reports, &spills);
    cr_assert_eq(spills, 0, "%d of step 18's sm_90 reports spill", spills);
    for (int d = 0; d < 2; d++)
        for (int t = 0; t < 2; t++) {
            const char *ty = t ? "bf16" : "fp16";
            const int stsm = 2 * (d ? 8 : 16); /* two builds: 2 tensors x 2 m16 tiles x 2 (4) pairs of n8 tiles */
            cr_assert_eq(n[0][d][t][STSM], 0, "d = %d, %s: step 17 has %d STSM", 64 << d, ty, n[0][d][t][STSM]);
            cr_assert_eq(n[1][d][t][STSM], stsm, "d = %d, %s: step 18 has %d STSM, not %d", 64 << d, ty,
                         n[1][d][t][STSM], stsm);
            cr_assert_eq(n[1][d][t][STS], n[0][d][t][STS] - 4 * stsm, "d = %d, %s: STS: step 18 %d, step 17 %d", 64 << d,
                         ty, n[1][d][t][STS], n[0][d][t][STS]);
            cr_assert_eq(n[1][d][t][LDSM], n[0][d][t][LDSM], "d = %d, %s: LDSM: step 18 %d, step 17 %d", 64 << d, ty,
                         n[1][d][t][LDSM], n[0][d][t][LDSM]);
        }
}
