/* kernels.h: chapter 05's launchers, one pair per step (1_wmma.cu .. kernels.cu). Each exists twice: the timed
 * build (plain name) and the instrumented build that counts global-memory bytes (_counted; see
 * common/io_tally.cuh). */
#ifndef FA_CH05_KERNELS_H
#define FA_CH05_KERNELS_H

#include "attention.h" /* AttnArgs */
#include "device.h"    /* KernelResources */

#ifdef __cplusplus
extern "C" {
#endif

/* Step 1, 1_wmma.cu: the WMMA API (flash_wmma_kernel). Grid (ceil(N/64), B*H), 128 threads (4 warps of 16 query
 * rows) per block; Br = Bc = 64 only (wmma_tiles.h). Steps 2 to 4 keep its tiles and its launchers' form. */
void flash_wmma_launch(const AttnArgs *a);
void flash_wmma_launch_counted(const AttnArgs *a);
void flash_wmma_resources(int d, int Br, int Bc, int dtype, KernelResources *r);
void flash_wmma_resources_counted(int d, int Br, int Bc, int dtype, KernelResources *r);

void flash_mma_staged_launch(const AttnArgs *a);
void flash_mma_staged_launch_counted(const AttnArgs *a);
void flash_mma_staged_resources(int d, int Br, int Bc, int dtype, KernelResources *r);
void flash_mma_staged_resources_counted(int d, int Br, int Bc, int dtype, KernelResources *r);

void flash_repack_launch(const AttnArgs *a);
void flash_repack_launch_counted(const AttnArgs *a);
void flash_repack_resources(int d, int Br, int Bc, int dtype, KernelResources *r);
void flash_repack_resources_counted(int d, int Br, int Bc, int dtype, KernelResources *r);

void flash_o_registers_launch(const AttnArgs *a);
void flash_o_registers_launch_counted(const AttnArgs *a);
void flash_o_registers_resources(int d, int Br, int Bc, int dtype, KernelResources *r);
void flash_o_registers_resources_counted(int d, int Br, int Bc, int dtype, KernelResources *r);

/* Steps 5 to 11 (tiles.h): grid (ceil(N/Br), B*H), 4 warps per block; Br = 64, and 128 for mma_async. */
void flash_swizzle_launch(const AttnArgs *a);
void flash_swizzle_launch_counted(const AttnArgs *a);
void flash_swizzle_resources(int d, int Br, int dtype, KernelResources *r);
void flash_swizzle_resources_counted(int d, int Br, int dtype, KernelResources *r);

void flash_mma_plain_launch(const AttnArgs *a);
void flash_mma_plain_launch_counted(const AttnArgs *a);
void flash_mma_plain_resources(int d, int Br, int dtype, KernelResources *r);
void flash_mma_plain_resources_counted(int d, int Br, int dtype, KernelResources *r);

void flash_unrolled_copy_launch(const AttnArgs *a);
void flash_unrolled_copy_launch_counted(const AttnArgs *a);
void flash_unrolled_copy_resources(int d, int Br, int dtype, KernelResources *r);
void flash_unrolled_copy_resources_counted(int d, int Br, int dtype, KernelResources *r);

void flash_edge_masks_launch(const AttnArgs *a);
void flash_edge_masks_launch_counted(const AttnArgs *a);
void flash_edge_masks_resources(int d, int Br, int dtype, KernelResources *r);
void flash_edge_masks_resources_counted(int d, int Br, int dtype, KernelResources *r);

void flash_mma_launch(const AttnArgs *a);
void flash_mma_launch_counted(const AttnArgs *a);
void flash_mma_resources(int d, int Br, int dtype, KernelResources *r);
void flash_mma_resources_counted(int d, int Br, int dtype, KernelResources *r);

void flash_cp_async_launch(const AttnArgs *a);
void flash_cp_async_launch_counted(const AttnArgs *a);
void flash_cp_async_resources(int d, int Br, int dtype, KernelResources *r);
void flash_cp_async_resources_counted(int d, int Br, int dtype, KernelResources *r);

void flash_mma_async_launch(const AttnArgs *a);
void flash_mma_async_launch_counted(const AttnArgs *a);
void flash_mma_async_resources(int d, int Br, int dtype, KernelResources *r);
void flash_mma_async_resources_counted(int d, int Br, int dtype, KernelResources *r);

#ifdef __cplusplus
}
#endif
#endif
