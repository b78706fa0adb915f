/* ch03.h: chapter 03's host side: the chapter's table (chapter.c) and its CPU loop nest (cpu.c). The closed
 * forms are in model.h, the tiles in tiles.h, the launchers in kernels.h; common/attention.h runs them. */
#ifndef FA_CH03_H
#define FA_CH03_H

#include "attention.h"
#include "driver.h"
#include "model.h"

extern const Chapter chapter03;
extern const AttnChapter flash_v2;

/* One head: Q, K, V, O are N x d, L holds N floats. For each query block Q_i: load it, sweep the K/V blocks
 * (with the causal mask only those on or below the diagonal), keep O_i, m, l local, divide once, store O_i
 * and L_i. Bytes are counted into *io where the kernel loads and stores. */
void flash_v2_head_cpu(const float *Q, const float *K, const float *V, float *O, float *L, int N, int d, int Br,
                       int Bc, int causal, IoBytes *io);
/* Every head of t (AttnChapter.forward_cpu). */
void flash_v2_forward_cpu(const Options *o, AttnHost *t, IoBytes *io, double *ms);

#endif
