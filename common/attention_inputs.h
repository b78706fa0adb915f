/* attention_inputs.h: the inputs Q, K, V of every FlashAttention chapter, from the seed. */
#ifndef FA_ATTENTION_INPUTS_H
#define FA_ATTENTION_INPUTS_H

#include "options.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Q and K uniform in [-2, 2), V in [-1, 1), from o->seed: scores of standard deviation about 1.3, so the
 * running maximum moves between K/V blocks; rounded to o->dtype, so that the host copies (and the float64
 * reference computed from them) hold exactly what the device stores. Each array holds B*H*N*d floats. */
void attn_inputs(const Options *o, float *Q, float *K, float *V);

#ifdef __cplusplus
}
#endif
#endif
