/* ch05.h: chapter 05's host side: the chapter's table (chapter.c), its CPU version (cpu.c) and the rule that
 * judges a low-precision run. The closed forms are in model.h, the tiles in tiles.h, the launchers in
 * kernels.h; common/attention.h runs them. */
#ifndef FA_CH05_H
#define FA_CH05_H

#include "attention.h"
#include "driver.h"
#include "model.h"

extern const Chapter chapter05;
/* One table per kernel (--kernel), indexed by TcKernel (tiles.h): flash_tc_kernels[TC_KERNEL_WMMA] is 1_wmma.cu's
 * kernel, and so on to flash_tc_kernels[TC_KERNEL_MMA_ASYNC], kernels.cu's. */
extern const AttnChapter flash_tc_kernels[TC_KERNEL_COUNT];
/* The table for these options (--kernel; the default kernel without it, and for an unknown name, which
 * validation rejects). */
const AttnChapter *flash_tc_for(const Options *o);
/* The registers, shared memory and blocks per SM of kernel (TcKernel) at (d, Br, dtype), Bc = 64: its step's
 * resources function. */
void flash_tc_resources(int kernel, int d, int Br, int dtype, KernelResources *r);

/* Attention for query row `row` of one head done plainly in the storage precision t, the way the kernel's
 * arithmetic is specified: inputs as stored (q, K, V already rounded to t), scores and softmax statistics in
 * fp32 over K/V blocks of Bc keys, P rounded to t before P V (the tensor cores take it in t), fp32 sums, O
 * rounded to t at the end. o: d floats; returns L = m + log l (natural log, fp32). */
float plain_row(const float *q, const float *K, const float *V, int N, int d, int Bc, int causal, int row,
                DType t, float *o);
/* Every head of t (AttnChapter.forward_cpu): plain_row for every row, bytes counted where the kernel moves
 * them (Q_i once per query block, K_j and V_j per visit, O_i and L_i once), in the storage type. */
void flash_tc_forward_cpu(const Options *o, AttnHost *t, IoBytes *io, double *ms);
/* The rule (AttnChapter.tolerances): a run may be at most twice as far from the float64 reference as the plain
 * computation of the same sampled rows, plus a small absolute term, and never beyond a fixed bound per type. */
void flash_tc_tolerances(const Options *o, const AttnHost *t, const AttnExpected *e, double *tol_O, double *tol_L);

#endif
