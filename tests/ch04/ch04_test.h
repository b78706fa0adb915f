/* ch04_test.h: chapter 04's tests: the shared attention test helpers, the chapter's headers, and the layouts. */
#ifndef CH04_TEST_H
#define CH04_TEST_H

#include "../attention_test.h"
#include "../../04_bank_conflicts/ch04.h"
#include "../../04_bank_conflicts/kernels.h"
#include "../../04_bank_conflicts/tiles.h"

static const char *const TEST_LAYOUTS[LAYOUT_COUNT] = {"naive", "transposed", "padded", "swizzled", "paired"};

static inline Options layout_shape(int layout, int B, int H, int N, int d, int Br, int Bc, int causal) {
    Options o = shape(B, H, N, d, Br, Bc, causal);
    option_assign(&o, CH04_OPT_LAYOUT, layout);
    return o;
}

/* check_problem (attention_test.h: every test tile, O and L against float64, counted == model) for every
 * layout, every d, causal and not, on the CPU (dev == NULL) or the GPU. */
static inline void check_layouts(const DeviceInfo *dev, int B, int H, int N) {
    for (int layout = 0; layout < LAYOUT_COUNT; layout++)
        for (int x = 0; x < 3; x++)
            for (int causal = 0; causal < 2; causal++)
                check_problem(&chapter04, dev, layout_shape(layout, B, H, N, TEST_DIMS[x], 32, 32, causal));
}

#endif
