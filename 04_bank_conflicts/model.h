/* model.h: chapter 04's closed forms. Chapter 03's model, with the transposed layout's differences:
 *
 * flash_v4, every layout but transposed: chapter 03's bytes, per head
 *     reads  = Q + (K + V) for every K/V block visited = 4 d (N + 2 keys)
 *     writes = O + L                                    = 4 N (d + 1)
 * flash_v4, transposed: K^T_j is read in whole float4 up to the block's last real key, so a ragged last block
 * of r keys reads 4 ceil(r / 4) columns of K^T (zeros past N):
 *     reads  = Q + V over the visits + K^T columns over the visits = 4 d (N + keys + keys_kt)
 *     keys_kt = keys + (visits of the last block) (4 ceil(r / 4) - r)
 * k_transpose (setup of the transposed layout: its own row, not part of attention's bytes):
 *     reads  = K = 4 N d,  writes = K^T = 4 d attn_kt_stride(N)
 * keys = key rows loaded summed over the query blocks (attn_keys_loaded: Tr N without the mask). */
#ifndef FA_CH04_MODEL_H
#define FA_CH04_MODEL_H

#include "io_bytes.h"
#include "layouts.h"
#include "options.h"
#include "report.h"

/* --layout, the chapter's option (chapter.c): the layout of K_j (layouts.h), paired without it. */
enum { CH04_OPT_LAYOUT }; /* the index of --layout among the chapter's options */
extern const ChapterOption ch04_options[];
extern const char *const layout_names[LAYOUT_COUNT + 1]; /* the words --layout takes, by layout; NULL last */
int layout_of(const Options *o);
const char *layout_name(int layout);

IoBytes k_transpose_bytes(const Options *o);    /* K read, K^T written                                */
IoBytes flash_v4_model_bytes(const Options *o); /* the loop nest's traffic, as above, for o's layout  */
IoBytes flash_v4_ideal_bytes(const Options *o); /* Q, K, V read once; O and L written once            */
unsigned long long flash_v4_flops(const Options *o);       /* 4 B H N^2 d, exactly half with the causal mask */
unsigned long long flash_v4_softmax_ops(const Options *o); /* 5 per unmasked score                    */
long long flash_v4_grid_blocks(const Options *o);          /* grid (Tr, B*H)                           */
/* Report rows: flash_v4_<layout>, after the setup row k_transpose in the transposed layout. */
int flash_v4_models(const Options *o, KernelModel *m);

#endif
