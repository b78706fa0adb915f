/* attention_cpu_size.h: the smaller problem a FlashAttention chapter's CPU fallback runs. */
#ifndef FA_ATTENTION_CPU_SIZE_H
#define FA_ATTENTION_CPU_SIZE_H

#include "options.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The CPU fallback's size for a FlashAttention-2 chapter (driver.h's shrink_for_cpu): about a second of CPU
 * time, the float64 check included. One batch, at most 4 heads, N halved until flops(o) <= 1.2e9, keeping N's
 * remainder modulo the tiles (a ragged N stays ragged) and the causal mask. */
void attn_shrink_for_cpu(Options *o, unsigned long long (*flops)(const Options *o));

#ifdef __cplusplus
}
#endif
#endif
