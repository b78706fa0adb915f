/* ch02.h: chapter 02's host side: the chapter's table (chapter.c) and its CPU loop nest (cpu.c). The closed
 * forms are in model.h, the tiles in tiles.h, the launchers in kernels.h; common/attention.h runs them. */
#ifndef FA_CH02_H
#define FA_CH02_H

#include "attention.h"
#include "driver.h"
#include "kernels.h"
#include "model.h"

extern const Chapter chapter02;
extern const AttnChapter flash_v1;

/* Algorithm 1, line 2, on host arrays: O = 0, l = 0, m = -inf for `rows` rows, counted into *io. */
void flash_v1_init_cpu(float *O, float *l, float *m, size_t rows, int d, IoBytes *io);
/* Algorithm 1, lines 5-15, for one head: Q, K, V, O are N x d, l and m N floats (m in log2 units, as the
 * kernel keeps it). Bytes are counted into *io where the kernel loads and stores. */
void flash_v1_head_cpu(const float *Q, const float *K, const float *V, float *O, float *l, float *m, int N,
                       int d, int Br, int Bc, IoBytes *io);
/* Both, every head of t (AttnChapter.forward_cpu): io[FV1_INIT], io[FV1_MAIN]; l and m in t->extra. */
void flash_v1_forward_cpu(const Options *o, AttnHost *t, IoBytes *io, double *ms);
/* The kernels write l and m, not L (AttnChapter.L_from_outputs): L = (m + log2 l) ln 2 for every row, -inf where
 * l = 0 (no visible key); NaN in l or m stays NaN. */
void flash_v1_L_from_l_m(AttnHost *t);

#endif
