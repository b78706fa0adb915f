/* ch04.h: chapter 04's host side: the chapter's table (chapter.c), its CPU loop nest (cpu.c) and the
 * bank-conflict model (banks.h). The closed forms are in model.h, the tiles in tiles.h, the layouts in
 * layouts.h, the launchers in kernels.h; common/attention.h runs them. */
#ifndef FA_CH04_H
#define FA_CH04_H

#include "attention.h"
#include "driver.h"
#include "layouts.h"
#include "model.h"

extern const Chapter chapter04;
/* One table per layout (the transposed one has the k_transpose setup row). */
extern const AttnChapter flash_v4[LAYOUT_COUNT];

/* One head, chapter 03's loop nest. K is read through its strides: element (key, x) at K[key * ks + x * xs]
 * (K as stored: ks = d, xs = 1; K^T: ks = 1, xs = attn_kt_stride(N)). A visit of a K/V block counts d x
 * kv_cols floats of K, kv_cols = its real keys, rounded up to 4 for K^T (what the kernel loads). */
void flash_v4_head_cpu(const float *Q, const float *K, int ks, int xs, const float *V, float *O, float *L, int N,
                       int d, int Br, int Bc, int causal, int round_k_cols, IoBytes *io);
/* K -> K^T for every head ([d][attn_kt_stride(N)], zeros past N), counted like k_transpose_kernel. */
void k_transpose_cpu(const float *K, float *Kt, size_t heads, int N, int d, IoBytes *io);
/* Every head of t, in o's layout (AttnChapter.forward_cpu). */
void flash_v4_forward_cpu(const Options *o, AttnHost *t, IoBytes *io, double *ms);

#endif
