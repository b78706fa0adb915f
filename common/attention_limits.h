/* attention_limits.h: the problems a FlashAttention chapter accepts: its table's tiles, d, and the device's
 * shared memory. */
#ifndef FA_ATTENTION_LIMITS_H
#define FA_ATTENTION_LIMITS_H

#include <stddef.h>

#include "attention_table.h"
#include "device.h"
#include "options.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The checks every FlashAttention chapter makes: d is 32, 64 or 128; Br and Bc are tiles the chapter
 * compiles; with a device (dev != NULL), the block's shared memory fits it (the message shows the sum and the
 * limit). Returns 0, or writes a message and returns 2 (driver.h's validate). */
int attn_validate(const AttnChapter *c, const Options *o, const DeviceInfo *dev, char *msg, size_t len,
                  const char *chapter_id);

/* For a chapter whose grid is (Tr, B*H): B*H is the grid's y dimension, at most 65535. Returns 0, or writes a
 * message and returns 2. */
int attn_validate_heads_grid(const Options *o, char *msg, size_t len);

#ifdef __cplusplus
}
#endif
#endif
