/* kernels.h: chapter 06's launchers (1_wgmma.cu: step wgmma; kernels.cu: step tma). Each exists twice: the timed
 * build (plain name) and the instrumented build that counts global-memory bytes (_counted; common/io_tally.cuh). The kernels are sm_90a
 * code only: the host calls them on an sm_90 GPU alone (chapter.c). */
#ifndef FA_CH06_KERNELS_H
#define FA_CH06_KERNELS_H

#include "attention.h" /* AttnArgs */
#include "device.h"    /* KernelResources */

#ifdef __cplusplus
extern "C" {
#endif

/* Grid (ceil(N/64), B*H), one warpgroup (128 threads) per block of 64 query rows, K/V blocks of 64 keys (tiles.h);
 * Q, K, V, O in a->dtype (fp16 or bf16), L in fp32; d = 64 or 128. */
void flash_wgmma_launch(const AttnArgs *a);
void flash_wgmma_launch_counted(const AttnArgs *a);

void flash_wgmma_resources(int d, int dtype, KernelResources *r);
void flash_wgmma_resources_counted(int d, int dtype, KernelResources *r);

/* The same grid and tiles, Q, K and V copied by the tensor memory accelerator (tensor maps made here, per launch). */
void flash_tma_launch(const AttnArgs *a);
void flash_tma_launch_counted(const AttnArgs *a);

void flash_tma_resources(int d, int dtype, KernelResources *r);
void flash_tma_resources_counted(int d, int dtype, KernelResources *r);

#ifdef __cplusplus
}
#endif
#endif
