/* attention_limits.c: the checks of attention_limits.h. */
#include "attention_limits.h"

#include <stdio.h>

#include "report.h"

int attn_validate(const AttnChapter *c, const Options *o, const DeviceInfo *dev, char *msg, size_t len,
                  const char *chapter_id) {
    const AttnTiles *t = &c->tiles;
    if (!head_dim_supported(o->d)) {
        snprintf(msg, len, "--dim %d is not supported: chapter %s has kernels for d = 32, 64 and 128", o->d,
                 chapter_id);
        return 2;
    }
    if (!t->br_supported(o->Br)) {
        snprintf(msg, len, "--br %d is not supported: Br must be one of %s", o->Br, t->br_sizes);
        return 2;
    }
    if (!t->bc_supported(o->Bc)) {
        snprintf(msg, len, "--bc %d is not supported: Bc must be one of %s", o->Bc, t->bc_sizes);
        return 2;
    }
    if (dev && dev->present) {
        const size_t need = t->smem_bytes(o->Br, o->Bc, o->d);
        if (need > (size_t)dev->smem_per_block_optin) {
            char a[32], b[32];
            snprintf(msg, len,
                     "--br %d --bc %d --dim %d needs %s B of shared memory per block (%s), more than the %s B per "
                     "block that %s allows; use smaller tiles",
                     o->Br, o->Bc, o->d, fmt_bytes(need, a, sizeof(a)), t->smem_formula,
                     fmt_bytes((unsigned long long)dev->smem_per_block_optin, b, sizeof(b)), dev->name);
            return 2;
        }
    }
    return 0;
}

int attn_validate_heads_grid(const Options *o, char *msg, size_t len) {
    if ((long long)o->B * o->H <= 65535) return 0;
    snprintf(msg, len, "--batch %d --heads %d: the grid is (Tr, B*H) and a grid's y dimension is at most 65535", o->B,
             o->H);
    return 2;
}
