/* kernels.h: chapter 03's launchers (kernels.cu). Each exists twice: the timed build (plain name) and the
 * instrumented build that counts global-memory bytes (_counted; see common/io_count.cuh). */
#ifndef FA_CH03_KERNELS_H
#define FA_CH03_KERNELS_H

#include <stddef.h>
#include "device.h" /* KernelResources */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    const float *Q, *K, *V; /* [B, H, N, d] on the device                              */
    float *O;               /* [B, H, N, d]                                              */
    float *L;               /* [B, H, N]: log-sum-exp of each row's scaled scores, m + log(l) */
    int B, H, N, d;
    int Br, Bc; /* tiles (tiles.h lists the supported ones)                       */
    int causal;
} FlashV2Args;

/* Grid (ceil(N/Br), B*H), 2*Br threads per block: one block per query block Q_i. */
void flash_v2_launch(const FlashV2Args *a);
void flash_v2_launch_counted(const FlashV2Args *a);

void flash_v2_resources(int d, int Br, int Bc, KernelResources *r);
void flash_v2_resources_counted(int d, int Br, int Bc, KernelResources *r);

#ifdef __cplusplus
}
#endif
#endif
