/* kernels.h: chapter 02's launchers (kernels.cu). Each exists twice: the timed build (plain name) and the
 * instrumented build that counts global-memory bytes (_counted; see common/io_count.cuh). */
#ifndef FA_CH02_KERNELS_H
#define FA_CH02_KERNELS_H

#include <stddef.h>
#include "device.h" /* KernelResources */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    const float *Q, *K, *V; /* [B, H, N, d] on the device                                          */
    float *O;               /* [B, H, N, d]: the output, and the running state between K/V blocks   */
    float *l, *m;           /* [B, H, N]: running row sums and row maxima (the paper's l and m)    */
    int B, H, N, d;
    int Br, Bc; /* tiles (tiles.h lists the supported ones)                                   */
} FlashV1Args;

/* Algorithm 1, line 2: O = 0, l = 0, m = -inf in HBM (flash_v1_init_kernel). */
void flash_v1_init_launch(const FlashV1Args *a);
void flash_v1_init_launch_counted(const FlashV1Args *a);

/* Algorithm 1, lines 5-15 (flash_v1_kernel): grid (B, H), FV1_THREADS threads, one block per head. */
void flash_v1_launch(const FlashV1Args *a);
void flash_v1_launch_counted(const FlashV1Args *a);

void flash_v1_resources(int d, int Br, int Bc, KernelResources *r);
void flash_v1_resources_counted(int d, int Br, int Bc, KernelResources *r);

#ifdef __cplusplus
}
#endif
#endif
