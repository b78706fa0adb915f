/* Chapter 05's shared-memory loads on paper: the ldmatrix addresses of the kernels are conflict-free by chapter
 * 04's rule (and would not be without the swizzle), and the model's counts of shared loads are the ones ncu
 * measured on the H200 (results/NVIDIA_H200/ch05/summary.txt) and the ones the kernel's loops make. No GPU. */
#include "ch05_test.h"

/* The 16-byte bank group (4 banks of 4 bytes; 8 groups in 128 bytes) of chunk c of row r of a tile of 2-byte
 * elements: rows of d elements, swizzled (steps 5 on) or not, or rows padded to d + 8 (steps 1-4, wmma_tiles.h). */
enum { PLAIN, SWIZZLED, PADDED };
static int bank_group(int r, int c, int d, int layout) {
    const int chunk = layout == SWIZZLED ? tc_swizzled_chunk(r, c) : c;
    const int row = layout == PADDED ? d + WMMA_PAD16 : d;
    return (r * row * 2 + chunk * 16) / 16 % 8;
}

/* The most lanes of one 8 x 8 matrix of an ldmatrix.x4 that fall into the same bank group, over every matrix
 * the kernels load: K_j (B of S) rows 16 nn + lane % 8 + 8 (j / 2), chunk 2 kk + j % 2; V_j and Q_i rows
 * 16 kk + lane % 8 + 8 (j % 2), chunk 2 dn + j / 2 (k_at and v_at in every mma step). 1: no conflicts. */
static int worst_ways(int d, int layout) {
    int worst = 0;
    for (int pattern = 0; pattern < 2; pattern++)
        for (int step = 0; step < d / 16; step++)       /* kk for K, dn for V and Q */
            for (int tile = 0; tile < TC_BC / 16; tile++) /* nn for K, kk for V       */
                for (int j = 0; j < 4; j++) {
                    int count[8] = {0};
                    for (int lane8 = 0; lane8 < 8; lane8++) {
                        const int r = 16 * tile + lane8 + 8 * (pattern == 0 ? j / 2 : j % 2);
                        const int c = 2 * step + (pattern == 0 ? j % 2 : j / 2);
                        const int n = ++count[bank_group(r, c, d, layout)];
                        if (n > worst) worst = n;
                    }
                }
    return worst;
}

Test(banks, ldmatrix_phases_are_conflict_free_with_the_swizzle) {
    for (int y = 0; y < 2; y++) {
        cr_assert_eq(worst_ways(TC_DIMS[y], SWIZZLED), 1, "d=%d: swizzled ldmatrix rows share a bank group", TC_DIMS[y]);
        /* rows of 128 or 256 bytes: without the swizzle all 8 rows of a matrix are in one group */
        cr_assert_eq(worst_ways(TC_DIMS[y], PLAIN), 8, "d=%d: the unswizzled layout should be 8-way", TC_DIMS[y]);
        /* steps 2-4: rows of 144 or 272 bytes, 9 or 17 chunks, put 8 consecutive rows' chunk c in 8 groups too */
        cr_assert_eq(worst_ways(TC_DIMS[y], PADDED), 1, "d=%d: padded ldmatrix rows share a bank group", TC_DIMS[y]);
    }
}

/* ncu at the article's size (fp16, one launch each): smsp__inst_executed_op_ldsm and the other shared loads. */
Test(banks, model_counts_are_what_ncu_measured) {
    Options o = tc_shape(10, 64, 1024, 64, DTYPE_FP16, 0);
    TcSharedLoads s = flash_tc_shared_loads(&o, TC_KERNEL_MMA);
    cr_assert_eq(s.ldmatrix, 21135360ull);
    cr_assert_eq(s.other, 163840ull);
    cr_assert_eq(s.wavefronts, 85196800ull);
    o.Br = 128;
    s = flash_tc_shared_loads(&o, TC_KERNEL_MMA_ASYNC);
    cr_assert_eq(s.ldmatrix, 10649600ull);
    cr_assert_eq(s.other, 163840ull);
}

/* The kernel's loops, written out: per block i, Tc_i K/V blocks (all, or with the causal mask those up to the
 * block's last row); per warp and K/V block, K and V fragments and, where Q_i is not kept in registers, Q's. */
static unsigned long long ldmatrix_by_loops(const Options *o, int kernel) {
    const int Tc = (o->N + o->Bc - 1) / o->Bc, Tr = (o->N + o->Br - 1) / o->Br, mt = o->Br / TC_WARPS / 16;
    const int q_regs = kernel != TC_KERNEL_MMA_ASYNC || MMA_ASYNC_Q_REGS(o->d, o->Br);
    unsigned long long n = 0;
    for (int i = 0; i < Tr; i++) {
        const int q0 = i * o->Br, q_rows = o->N - q0 < o->Br ? o->N - q0 : o->Br;
        int Tc_i = Tc;
        if (o->causal && (q0 + q_rows - 1) / o->Bc + 1 < Tc) Tc_i = (q0 + q_rows - 1) / o->Bc + 1;
        for (int w = 0; w < TC_WARPS; w++) {
            if (q_regs) n += (unsigned long long)mt * (o->d / 16);
            for (int j = 0; j < Tc_i; j++)
                n += 2ull * (o->d / 16) * (o->Bc / 16) + (q_regs ? 0 : (unsigned long long)mt * (o->d / 16));
        }
    }
    return n * o->B * o->H;
}

Test(banks, model_counts_follow_the_kernels_loops) {
    const int Ns[] = {1, 17, 64, 65, 1000, 1024, 4097};
    const struct { int kernel, Br; } tiles[] = {
        {TC_KERNEL_O_REGISTERS, 64}, {TC_KERNEL_SWIZZLE, 64},    {TC_KERNEL_MMA_PLAIN, 64},
        {TC_KERNEL_UNROLLED_COPY, 64}, {TC_KERNEL_EDGE_MASKS, 64}, {TC_KERNEL_MMA, 64},
        {TC_KERNEL_CP_ASYNC, 64},    {TC_KERNEL_MMA_ASYNC, 64},  {TC_KERNEL_MMA_ASYNC, 128}};
    for (size_t n = 0; n < sizeof(Ns) / sizeof(Ns[0]); n++)
        for (int y = 0; y < 2; y++)
            for (int causal = 0; causal < 2; causal++)
                for (size_t t = 0; t < sizeof(tiles) / sizeof(tiles[0]); t++) {
                    Options o = tc_shape(2, 3, Ns[n], TC_DIMS[y], DTYPE_FP16, causal);
                    o.Br = tiles[t].Br;
                    const unsigned long long want = ldmatrix_by_loops(&o, tiles[t].kernel);
                    cr_assert_eq(flash_tc_shared_loads(&o, tiles[t].kernel).ldmatrix, want,
                                 "N=%d d=%d causal=%d kernel %d Br=%d", Ns[n], TC_DIMS[y], causal, tiles[t].kernel,
                                 tiles[t].Br);
                }
}
