/* model.h: chapter 03's closed forms: the bytes flash_v2 requests from global memory, the FLOPs, the grid.
 *
 * Per head (N rows of d floats, 4 bytes each), with Tr = ceil(N/Br) query blocks: block i reads Q_i once,
 * then K_j and V_j for every K/V block it visits, and writes O_i and L_i once (L: one float per row):
 *     reads  = Q + (K + V) for every block = 4 d (N + 2 keys),  keys = key rows loaded, summed over the blocks
 *     writes = O + L                       = 4 N (d + 1)
 * Without the mask every block visits all Tc K/V blocks, keys = Tr N:  reads = Q + Tr (K + V).
 * With the causal mask block i visits Tc_i = ceil((last real row of Q_i + 1) / Bc) blocks and loads
 * min(N, Bc Tc_i) key rows. For Br a multiple of Bc that sums to keys = Br Tr (Tr - 1) / 2 + N.
 * A ragged last tile moves only its real rows, so the sums are exact for every N. */
#ifndef FA_CH03_MODEL_H
#define FA_CH03_MODEL_H

#include <stddef.h>

#include "io_bytes.h"
#include "options.h"
#include "report.h"

IoBytes flash_v2_model_bytes(const Options *o); /* the loop nest's traffic, as above                  */
IoBytes flash_v2_ideal_bytes(const Options *o); /* Q, K, V read once; O and L written once             */
unsigned long long flash_v2_flops(const Options *o);       /* 4 B H N^2 d, exactly half with the causal mask */
unsigned long long flash_v2_softmax_ops(const Options *o); /* 5 per unmasked score: N^2, or N (N + 1) / 2 causal */
long long flash_v2_grid_blocks(const Options *o); /* grid (Tr, B*H): one block per query block         */
long long ch02_grid_blocks(const Options *o);     /* chapter 02's grid (B, H) at the same options       */
int flash_v2_models(const Options *o, KernelModel *m);

#endif
