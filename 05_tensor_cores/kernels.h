/* kernels.h: chapter 05's launchers (kernels.cu and wmma.cu). Each exists twice: the timed build (plain name) and the
 * instrumented build that counts global-memory bytes (_counted; see common/io_tally.cuh). */
#ifndef FA_CH05_KERNELS_H
#define FA_CH05_KERNELS_H

#include "attention.h" /* AttnArgs */
#include "device.h"    /* KernelResources */

#ifdef __cplusplus
extern "C" {
#endif

/* Grid (ceil(N/Br), B*H), one block per query block, 4 warps (tiles.h); Q, K, V, O in a->dtype (fp16 or bf16),
 * L in fp32. mma: Br = 64; mma_async: Br = 64 or 128. */
void flash_mma_launch(const AttnArgs *a);
void flash_mma_launch_counted(const AttnArgs *a);
void flash_mma_async_launch(const AttnArgs *a);
void flash_mma_async_launch_counted(const AttnArgs *a);

/* which: TC_KERNEL_MMA or TC_KERNEL_MMA_ASYNC (tiles.h) */
void flash_tc_resources(int which, int d, int Br, int dtype, KernelResources *r);
void flash_tc_resources_counted(int which, int d, int Br, int dtype, KernelResources *r);

/* wmma.cu: step 1 of the chapter, the WMMA API (flash_wmma_kernel). Grid (ceil(N/64), B*H), 128 threads (4
 * warps of 16 query rows) per block; Br = Bc = 64 only (wmma_tiles.h); Q, K, V, O in a->dtype (fp16 or
 * bf16), L in fp32. */
void flash_wmma_launch(const AttnArgs *a);
void flash_wmma_launch_counted(const AttnArgs *a);

void flash_wmma_resources(int d, int Br, int Bc, int dtype, KernelResources *r);
void flash_wmma_resources_counted(int d, int Br, int Bc, int dtype, KernelResources *r);

#ifdef __cplusplus
}
#endif
#endif
