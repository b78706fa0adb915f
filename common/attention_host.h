/* attention_host.h: the host copies of one problem (AttnHost): made from the inputs, poisoned, finished, freed. */
#ifndef FA_ATTENTION_HOST_H
#define FA_ATTENTION_HOST_H

#include "attention_table.h"
#include "options.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The inputs of o, and outputs filled with NaN (0xFF bytes). attn_host_poison refills the outputs. */
AttnHost attn_host_make(const AttnChapter *c, const Options *o);
void attn_host_poison(AttnHost *t);
void attn_host_free(AttnHost *t);
/* After a forward pass: L from the chapter's own outputs, where it computes L on the host. */
void attn_host_finish(const AttnChapter *c, AttnHost *t);

#ifdef __cplusplus
}
#endif
#endif
