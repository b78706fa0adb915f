/* ch06.h: chapter 06's host side: the chapter's table (chapter.c), its CPU version (cpu.c) and the rule that
 * judges a low-precision run (chapter 05's). The closed forms are in model.h, the tiles in tiles.h, the launchers
 * in kernels.h; common/attention.h runs them. */
#ifndef FA_CH06_H
#define FA_CH06_H

#include "attention.h"
#include "driver.h"
#include "model.h"

extern const Chapter chapter06;
/* One table per kernel (--kernel), indexed by Fa3Kernel (model.h). */
extern const AttnChapter fa3_kernels[FA3_KERNEL_COUNT];
/* The table for these options (--kernel; the default kernel without it). */
const AttnChapter *fa3_for(const Options *o);
/* The resources (threads, registers, shared memory, blocks per SM) of kernel k (Fa3Kernel) at tile Br x Bc, d and
 * dtype, from its step's launcher file: the --model lines and the tests read them the same way. */
void fa3_kernel_resources(int kernel, int d, int Br, int Bc, int dtype, KernelResources *r);

/* Attention for query row `row` of one head done plainly in the storage precision t, the way the kernel's
 * arithmetic is specified (chapter 05's rule): inputs as stored (q, K, V already rounded to t), scores and softmax
 * statistics in fp32 over K/V blocks of Bc keys, P rounded to t before P V (wgmma takes it in t, from registers),
 * fp32 sums, O rounded to t at the end. o: d floats; returns L = m + log l (natural log, fp32). */
float fa3_plain_row(const float *q, const float *K, const float *V, int N, int d, int Bc, int causal, int row,
                    DType t, float *o);
/* Every head of t (AttnChapter.forward_cpu): fa3_plain_row for every row, bytes counted where the kernels move
 * them (Q_i once per query block, K_j and V_j per visit, O_i and L_i once), in the storage type. Both kernels do
 * the same arithmetic and move the same bytes: one CPU version serves them. */
void fa3_forward_cpu(const Options *o, AttnHost *t, IoBytes *io, double *ms);
/* The rule (AttnChapter.tolerances): a run may be at most twice as far from the float64 reference as the plain
 * computation of the same sampled rows, plus a small absolute term, and never beyond a fixed bound per type. */
void fa3_tolerances(const Options *o, const AttnHost *t, const AttnExpected *e, double *tol_O, double *tol_L);

#endif
