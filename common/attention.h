/* attention.h: what every FlashAttention chapter shares on the host, so that a chapter is its kernels, its
 * tiles, its model, its CPU loop nest and a short table (its chapter.c). One header per job, all included here:
 *
 *   attention_table.h     AttnArgs, AttnBuffer, AttnHost, AttnTiles, AttnChapter: what a table declares
 *   attention_limits.h    the problems a table accepts            attention_inputs.h   Q, K, V from the seed
 *   attention_host.h      the host copies of one problem          attention_memory.h   the memory a run takes
 *   attention_cpu_size.h  the CPU fallback's smaller problem      attention_grid.h     the FlashAttention-2 grid
 *   attention_check.h     the sampled float64 check of O and L
 *
 * and, here, the runners (attention.c): attn_run_gpu times each kernel alone, counts the instrumented build,
 * checks one forward pass; attn_run_cpu runs the CPU version, counted and checked the same way. */
#ifndef FA_ATTENTION_H
#define FA_ATTENTION_H

#include "attention_check.h"
#include "attention_cpu_size.h"
#include "attention_grid.h"
#include "attention_host.h"
#include "attention_inputs.h"
#include "attention_limits.h"
#include "attention_memory.h"
#include "attention_table.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The program's runs (driver.h's run_gpu and run_cpu): times, counted bytes, and the check on the last
 * kernel's row. */
void attn_run_gpu(const AttnChapter *c, const Options *o, KernelRun *runs);
void attn_run_cpu(const AttnChapter *c, const Options *o, KernelRun *runs);

/* One forward pass on the GPU, for tests: t's inputs up, outputs poisoned, every kernel of the timed build
 * (or of the instrumented build when counted != 0; then io[k] receives kernel k's bytes), t's outputs down
 * (and L computed from l and m where the kernels write those). */
void attn_forward_gpu(const AttnChapter *c, const Options *o, AttnHost *t, int counted, IoBytes *io);

#ifdef __cplusplus
}
#endif
#endif
