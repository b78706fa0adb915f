/* layouts.h: where each element of K_j sits in shared memory, and which lane reads what, for every layout of
 * chapter 04. One header for the variants' kernel (variants.cu) and for the host's bank-conflict model (banks.c)
 * and its pictures, so that the prediction is made from the very index arithmetic the kernels run. The paired
 * layout's index is also written out in kernels.cu, the chapter's kernel, where `diff` against chapter 03 shows
 * it; tests/ch04/test_model.c holds the two equal.
 *
 *   naive       K_j as stored in HBM, [Bc][d]; S_ij reads it across its rows (chapter 03's layout)
 *   transposed  K^T in HBM ([d][N] per head, written by a setup kernel), K^T_j in shared memory as [d][Bc]:
 *               S_ij reads it along its rows, VW consecutive keys per lane in one vector load
 *   padded      K_j as [Bc][d + 4]: consecutive keys start 4 banks apart
 *   swizzled    K_j as [Bc][d], the 16-byte column index XOR'd with the key's low 3 bits
 *   paired      swizzled, and a lane-to-work mapping in which lanes n and n^1 share a query row and lanes n and
 *               n^2 share a key column, so that every float4 load of Q_i, K_j, P_ij and V_j is served in 2
 *               wavefronts instead of 4
 *
 * Work split (all variants, tiles.h): a warp owns 16 query rows and Bc keys per K/V block; a lane owns TM = 4
 * rows (row_lane + 4t, t < 4) and TN = Bc/8 keys, and in P_ij V_j the float4 columns key_lane + 8u of O.
 * row_lane (0..3) and key_lane (0..7) come from the lane's bits: in every variant but paired, row_lane =
 * lane / 8 and key_lane = lane % 8 (8 consecutive lanes per row); in paired, bits 1 and 3 give the row and
 * bits 0, 2 and 4 the key. */
#ifndef FA_CH04_LAYOUTS_H
#define FA_CH04_LAYOUTS_H

#include "tiles.h"

#ifdef __CUDACC__
#define HD __host__ __device__ __forceinline__
#else
#define HD inline
#endif

enum { LAYOUT_NAIVE, LAYOUT_TRANSPOSED, LAYOUT_PADDED, LAYOUT_SWIZZLED, LAYOUT_PAIRED, LAYOUT_COUNT };
#define LAYOUT_NAMES "naive, transposed, padded, swizzled, paired"

#define K_PAD 4 /* floats of padding after each row of K_j in the padded layout */

/* Row length of K^T in HBM (the transposed layout): N rounded up to a multiple of 4 floats, so that every row
 * starts 16-byte aligned; the columns past N hold zeros. */
static HD int attn_kt_stride(int N) { return (N + 3) / 4 * 4; }

/* Row and key of a lane (see above). */
static HD int row_lane(int layout, int lane) {
    return layout == LAYOUT_PAIRED ? ((lane >> 1) & 1) | ((lane >> 3) & 1) << 1 : lane / 8;
}
static HD int key_lane(int layout, int lane) {
    return layout == LAYOUT_PAIRED ? (lane & 1) | ((lane >> 2) & 1) << 1 | ((lane >> 4) & 1) << 2 : lane % 8;
}
/* The lane with row_lane = r and key_lane = 0: where a row's statistic is gathered from. */
static HD int first_lane_of_row(int layout, int r) {
    return layout == LAYOUT_PAIRED ? (r & 1) << 1 | (r >> 1) << 3 : 8 * r;
}
/* Shuffle distances that stay inside a row's 8 lanes (they differ in the key bits only), largest first. */
static HD int row_xor(int layout, int step) { /* step 0, 1, 2 */
    return layout == LAYOUT_PAIRED ? (step == 0 ? 16 : step == 1 ? 4 : 1) : (4 >> step);
}

/* Keys per vector load of K^T_j in the transposed layout (VW consecutive keys: float4, or float2 at Bc = 16). */
static HD int transposed_vw(int Bc) { return Bc / 8 < 4 ? Bc / 8 : 4; }

/* Key (0 .. Bc-1) of a lane's c-th key slot (c < Bc/8). In the transposed layout a lane's keys come in runs of
 * VW, one vector load each; elsewhere they are key_lane + 8c. */
static HD int key_of_slot(int layout, int Bc, int lane, int c) {
    const int g = key_lane(layout, lane);
    if (layout != LAYOUT_TRANSPOSED) return g + 8 * c;
    const int vw = transposed_vw(Bc);
    return vw * g + 8 * vw * (c / vw) + c % vw;
}

/* Floats of shared memory K_j takes, and the offset (in floats) of K_j[key][x], x < d. */
static HD int k_tile_floats(int layout, int Bc, int d) { return layout == LAYOUT_PADDED ? Bc * (d + K_PAD) : Bc * d; }
static HD int k_offset(int layout, int Bc, int d, int key, int x) {
    switch (layout) {
    case LAYOUT_TRANSPOSED: return x * Bc + key;
    case LAYOUT_PADDED: return key * (d + K_PAD) + x;
    case LAYOUT_SWIZZLED:
    case LAYOUT_PAIRED:
        /* ASSIGNMENT BEGIN swizzle [banks model gpu]: what `make assignment CH=04` replaces with the stub below */
        /* ASSIGNMENT STUB swizzle
        // TODO: the swizzle: K_j[key][x] in row key of d floats, its float4 column (x / 4) XOR'd with the
        // key's low 3 bits, x's place within the float4 kept. The kernel's fill and reads and the bank model
        // all use this line. README: the table of layouts, and "The bank rule, and the model".
        return key * d + x;
        */
        return key * d + (((x >> 2) ^ (key & 7)) << 2) + (x & 3);
        /* ASSIGNMENT END swizzle */
    default: return key * d + x;
    }
}

/* Shared memory per block in bytes with K_j as the layout stores it (tiles.h). */
static inline size_t smem_bytes_layout(int Br, int Bc, int d, int layout) {
    return sizeof(float) * (size_t)SMEM_FLOATS(Br, Bc, d, k_tile_floats(layout, Bc, d));
}

#endif
