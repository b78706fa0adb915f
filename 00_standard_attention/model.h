/* model.h: chapter 00's closed forms: the bytes each kernel requests from global memory, the compulsory
 * bytes, article 2's count (IO-3kernels in ARTICLES.md), and the FLOPs.
 *
 * Per head, with e bytes per element (4 for fp32, 2 for fp16), Tq = ceil(N / QK_BR) query blocks of qk_gemm
 * and Tp = ceil(N / PV_BR(d)) row blocks of pv_gemm (tiles.h):
 *   qk_gemm  reads Q_i once per block and all of K per block:   reads  e (N d + Tq N d)    writes e N^2 (S)
 *   softmax  reads S once, writes P once:                       reads  e N^2               writes e N^2
 *   pv_gemm  reads P_i once per block and all of V per block:   reads  e (N^2 + Tp N d)    writes e N d (O)
 * Ragged last tiles move only their real rows and keys, so these sums are exact for every N.
 *
 * Compulsory traffic (every input read once, every output written once):
 *   qk: reads e 2Nd, writes e N^2;  softmax: e N^2 and e N^2;  pv: reads e (N^2 + Nd), writes e N d
 *   total e (4Nd + 4N^2) per head: 8Nd + 8N^2 in fp16.
 * Article 2 (IO-3kernels) counts, in fp16, 4Nd + 2N^2, 4N^2 and 4N^2 + 4Nd: total 8Nd + 10N^2. Its third step reads P
 * twice (2N^2 + 2N^2): one read of P, one of V and one write of O is 2N^2 + 4Nd. io3kernels_bytes() returns the
 * article's numbers, generalised to e-byte elements, for the --model lines; the compulsory columns hold ours. */
#ifndef FA_CH00_MODEL_H
#define FA_CH00_MODEL_H

#include "io_bytes.h"
#include "kernels.h"
#include "options.h"
#include "report.h"

/* --gemm, the chapter's option (chapter.c): who computes the two matrix products. */
typedef enum { GEMM_OWN = 0, GEMM_CUBLAS = 1 } GemmBackend;
enum { CH00_OPT_GEMM }; /* the index of --gemm among the chapter's options */
extern const ChapterOption ch00_options[];
GemmBackend gemm_of(const Options *o);

IoBytes qk_model_bytes(const Options *o);
IoBytes softmax_model_bytes(const Options *o);
IoBytes pv_model_bytes(const Options *o);
IoBytes qk_ideal_bytes(const Options *o);
IoBytes softmax_ideal_bytes(const Options *o);
IoBytes pv_ideal_bytes(const Options *o);

/* Article 2's bytes (IO-3kernels) for step SA_QK, SA_SOFTMAX or SA_PV over all B*H heads: e (2Nd + N^2), 2e N^2 and
 * e (2N^2 + 2Nd), i.e. 4Nd + 2N^2, 4N^2 and 4N^2 + 4Nd per head in fp16. */
unsigned long long io3kernels_bytes(const Options *o, int step);

unsigned long long gemm_flops(const Options *o);  /* one of the two products: 2 B H N^2 d        */
unsigned long long softmax_ops(const Options *o); /* 5 per score (max, subtract, exp, sum, scale) */
long long qk_blocks_per_head(const Options *o); /* Tq = ceil(N / QK_BR)                   */
long long pv_blocks_per_head(const Options *o); /* Tp = ceil(N / PV_BR(d))                */

/* The report's three rows: qk_gemm, softmax, pv_gemm, or with --gemm cublas qk_cublas, softmax, pv_cublas,
 * whose model is the compulsory traffic (cuBLAS's own tiling, and so what it re-reads, is not visible). */
int std_attn_models(const Options *o, KernelModel *m);

#endif
