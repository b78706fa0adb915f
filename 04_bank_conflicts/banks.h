/* banks.h: chapter 04's shared-memory bank model: how many wavefronts flash_v4's shared loads take, for every
 * layout of K_j, computed lane by lane from layouts.h and tiles.h (the kernels' own index arithmetic), and the
 * pictures of one K_j load (which lane's word each bank delivers in which wavefront).
 *
 * What is counted: the warp-wide shared LOADS of the two inner loops of flash_v4_kernel, which every warp of
 * every block executes identically for every K/V block it visits (the fills of Q_i, K_j, V_j and the writes of
 * P_ij are stores, outside the count):
 *   S_ij    for each 4 features k: TM float4 of Q_i, then the K_j loads of the layout
 *   P_ij V_j for each 4 keys c: TM float4 of P_ij, then 4 x d/32 float4 of V_j
 * At d = 64, Bc = 32 that is 16 (4 + 4) + 8 (4 + 8) = 224 loads per warp per K/V block.
 *
 * The wavefront rule (banks.c states it where it is applied) reproduces what ncu measured on an H200 for
 * chapter 03's kernel, whose K_j is this chapter's naive layout: 2,498.1 wavefronts per warp per K/V block
 * at d = 64, Bc = 32 against 2,496 predicted, 2,351,569,093 bank conflicts against 2,348,810,240. */
#ifndef FA_CH04_BANKS_H
#define FA_CH04_BANKS_H

#include <stdio.h>

#include "options.h"

/* requests: warp-wide load instructions; wavefronts: shared-memory cycles that serve them; conflicts:
 * wavefronts beyond the fewest the access width allows (what ncu reports as bank conflicts). All zero for a
 * shape the kernel does not compile. */
typedef struct {
    unsigned long long requests, wavefronts, conflicts;
} BankCounts;

/* "naive", "transposed", ... (layouts.h's order); NULL for a layout that does not exist. */
const char *banks_layout_name(int layout);

/* One warp-wide load: lane n reads `bytes` (4, 8 or 16) bytes at float offset offset[n] from the start of
 * shared memory (a multiple of bytes / 4, as every vector load must be). requests = 1. All zero for another
 * width or a misaligned offset. */
BankCounts bank_counts_load(const long long offset[32], int bytes);

/* One warp, one K/V block: d in {32, 64, 128}, Bc in {16, 32, 64}, Br a multiple of 16 (Br only places the
 * tiles after Q_i; the counts do not depend on it). */
BankCounts bank_counts_warp_block(int layout, int d, int Br, int Bc);

/* The whole problem of o: per warp-block x Br/16 warps x the K/V blocks each query block visits (all of them,
 * or those on or below the diagonal with the causal mask) x B*H heads, in checked_math.h's checked arithmetic. */
BankCounts bank_counts(const Options *o, int layout);

/* The --model lines: the rule in one sentence, then per layout the counts of bank_counts, the conflict rate
 * (conflicts / wavefronts) and N-way (wavefronts / requests). The layout --layout gives is marked. */
void banks_print(FILE *f, const Options *o);

/* The picture of one warp's first K_j load of the S_ij loop (k = 0, first key slot): 32 rows (lanes 0..31) of
 * 32 columns (banks 0..31), each the wavefront (1-based within the load) in which that bank delivers that
 * lane's word, 0 where the lane reads nothing in that bank. '#' lines first (layout, d, Bc, the load's
 * wavefronts and phases), so that gnuplot's `matrix` reads the rest. Returns the load's wavefronts, or -1 for
 * an unknown layout or unsupported d, Bc, or when writing fails. */
int bank_picture(FILE *f, int layout, int d, int Bc);

/* dir/ch04_banks_<layout>.dat for every layout (bank_picture at d, Bc): the input of plots/render-banks.sh.
 * Returns 0, or -1 after a message on stderr naming the file that could not be written. */
int banks_pictures(const char *dir, int d, int Bc);

#endif
