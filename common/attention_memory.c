/* attention_memory.c: the memory sizes of attention_memory.h, in checked_math.h's arithmetic. */
#include "attention_memory.h"

#include "attention_check.h"
#include "checked_math.h"

/* The bytes of the chapter's buffers: on the device, all of them; on the host, the outputs (as fp32). */
static unsigned long long extra_bytes(const AttnChapter *c, const Options *o, int host) {
    unsigned long long sum = 0;
    for (int x = 0; x < c->nextra; x++) {
        if (host && !c->extra[x].output) continue;
        const unsigned long long e = host ? sizeof(float) : dtype_size(c->extra[x].type);
        sum = count_add(sum, count_mul(e, c->extra[x].elements(o->B, o->H, o->N, o->d)));
    }
    return sum;
}

size_t attn_device_bytes(const AttnChapter *c, const Options *o) { /* Q, K, V, O; L; the chapter's buffers */
    typedef unsigned long long u64;
    const u64 rows = count_mul3((u64)o->B, (u64)o->H, (u64)o->N);
    const u64 qkvo = count_mul(dtype_size(o->dtype), count_mul(rows, 4 * (u64)o->d));
    const u64 L = c->L_from_outputs ? 0 : count_mul(sizeof(float), rows);
    return count_add(count_add(qkvo, L), extra_bytes(c, o, 0));
}

size_t attn_host_bytes(const AttnChapter *c, const Options *o) {
    typedef unsigned long long u64;
    const u64 rows = count_mul3((u64)o->B, (u64)o->H, (u64)o->N);
    const u64 tensors = count_add(count_mul(sizeof(float), count_mul(rows, 4 * (u64)o->d + 1)), /* Q, K, V, O; L */
                                  extra_bytes(c, o, 1));
    if (o->no_check) return tensors;
    const u64 heads = count_mul((u64)o->B, (u64)o->H);
    const u64 nheads = heads < ATTN_CHECK_HEADS ? heads : ATTN_CHECK_HEADS;
    const u64 nrows = o->N <= ATTN_FULL_CHECK_N ? (u64)o->N : ATTN_CHECK_ROWS;
    const u64 check = sizeof(int) * ((u64)o->N < ATTN_CHECK_ROWS ? ATTN_CHECK_ROWS : (u64)o->N) +
                      sizeof(double) * nheads * nrows * ((u64)o->d + 1);
    return count_add(tensors, check);
}
