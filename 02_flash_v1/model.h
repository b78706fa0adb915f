/* model.h: chapter 02's closed forms: the bytes each kernel requests from global memory, the FLOPs, the grid,
 * and the shared-memory and occupancy arithmetic of the --model lines.
 *
 * Per head (N rows of d floats, 4 bytes each), with Tc = ceil(N/Bc) K/V blocks:
 *   flash_v1_init  writes O, l and m once:                    writes = 4 N (d + 2)
 *   flash_v1       step (j, i) reads Q_i, O_i, l_i, m_i and writes O_i, l_i, m_i back. Summed over i that is
 *                  all of Q, O, l and m, once per j; K and V are read once in all (K_j, V_j stay on chip for
 *                  the whole inner loop):
 *                      reads  = Tc (Q + O + l + m) + K + V = 4 N (Tc (2d + 2) + 2d)
 *                      writes = Tc (O + l + m)             = 4 N Tc (d + 2)
 * A ragged last tile moves only its real rows, so the sums over i are exact for every N. Br does not appear:
 * the traffic is set by Bc alone. */
#ifndef FA_CH02_MODEL_H
#define FA_CH02_MODEL_H

#include <stddef.h>

#include "report.h"
#include "io_bytes.h"
#include "options.h"

/* The report's rows, in launch order. */
enum { FV1_INIT, FV1_MAIN, FV1_KERNELS };

IoBytes flash_v1_init_bytes(const Options *o);  /* writes O + l + m                               */
IoBytes flash_v1_model_bytes(const Options *o); /* the loop nest's traffic, as above              */
IoBytes flash_v1_ideal_bytes(const Options *o); /* Q, K, V read once; O, l, m written once         */
unsigned long long flash_v1_flops(const Options *o);       /* 4 B H N^2 d                              */
unsigned long long flash_v1_softmax_ops(const Options *o); /* 5 per score: B H N^2 scores              */
long long flash_v1_grid_blocks(const Options *o); /* grid (B, H): one block per head              */
int flash_v1_models(const Options *o, KernelModel *m);

/* The article's GPU, sm_75 (RTX 2070): 64 KB of shared memory per SM and per block (opt-in), 32 warps and
 * 16 blocks per SM. Blocks per SM that a kernel with this much shared memory and these warps per block can
 * keep resident, counting shared memory and warps only (registers depend on the compiled code); 0 when the
 * block does not fit at all. */
#define SM75_SMEM_PER_SM 65536
#define SM75_WARPS_PER_SM 32
#define SM75_BLOCKS_PER_SM 16
int sm75_blocks_per_sm(size_t smem_bytes, int warps_per_block);
/* The article's Triton v1: Q_i, K_j, V_j and S_ij, Bc = Br: 3 Bc d + Bc^2 floats, 4 warps. */
size_t article_v1_smem_bytes(int Bc, int d);


#endif
