/* attention_memory.h: the device and host memory one problem takes, checked before anything is allocated. */
#ifndef FA_ATTENTION_MEMORY_H
#define FA_ATTENTION_MEMORY_H

#include <stddef.h>

#include "attention_table.h"
#include "options.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Device memory one problem takes: Q, K, V, O, L and the chapter's buffers. */
size_t attn_device_bytes(const AttnChapter *c, const Options *o);
/* Host memory a run takes at most (the same on the CPU and the GPU): the host tensors (attn_host_make) and
 * the check's float64 rows (attn_expected). */
size_t attn_host_bytes(const AttnChapter *c, const Options *o);

#ifdef __cplusplus
}
#endif
#endif
