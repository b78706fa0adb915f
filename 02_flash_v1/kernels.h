/* kernels.h: chapter 02's launchers (kernels.cu). Each exists twice: the timed build (plain name) and the
 * instrumented build that counts global-memory bytes (_counted; see common/io_tally.cuh). */
#ifndef FA_CH02_KERNELS_H
#define FA_CH02_KERNELS_H

#include "attention.h" /* AttnArgs */
#include "device.h"    /* KernelResources */

#ifdef __cplusplus
extern "C" {
#endif

/* Algorithm 1's running sum l and maximum m, [B, H, N] fp32 each: the chapter's own buffers, at these indices of
 * AttnArgs.extra (chapter.c's table declares them). */
enum { FV1_BUF_L, FV1_BUF_M, FV1_BUFFERS };

/* Algorithm 1, line 2: O = 0, l = 0, m = -inf in HBM (flash_v1_init_kernel). */
void flash_v1_init_launch(const AttnArgs *a);
void flash_v1_init_launch_counted(const AttnArgs *a);

/* Algorithm 1, lines 5-15 (flash_v1_kernel): grid (B, H), 2 Br threads, one block per head; writes O, l, m. */
void flash_v1_launch(const AttnArgs *a);
void flash_v1_launch_counted(const AttnArgs *a);

void flash_v1_resources(int d, int Br, int Bc, KernelResources *r);
void flash_v1_resources_counted(int d, int Br, int Bc, KernelResources *r);

#ifdef __cplusplus
}
#endif
#endif
