/* kernels.h: chapter 06's launchers (1_wgmma.cu: step wgmma; 2_tma.cu: step tma; 3_warp_specialized.cu: step
 * warp_specialized; 4_pingpong.cu: step pingpong; 5_overlap.cu: step overlap; 6_zigzag.cu: step zigzag; 7_queue.cu:
 * step queue; kernels.cu: step tma_store; 9_dispatch.c: step dispatch, host code that runs one of them). Each exists
 * twice: the timed build (plain name) and the instrumented build that counts global-memory bytes (_counted;
 * common/io_tally.cuh). The kernels are sm_90a code only: the host calls them on an sm_90 GPU alone (chapter.c). */
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

/* A persistent grid (min(Tr B H, SMs) blocks) of 128 (1 + Br/64) threads: a producer warpgroup copying Q_i, K_j,
 * V_j by TMA into a ring of stages, and Br/64 consumer warpgroups of 64 query rows each; the tiles Br x Bc that
 * fa3_ws_tile_compiled accepts (tiles.h). Tensor maps made here, kept while the problem stays the same. */
void flash_warp_specialized_launch(const AttnArgs *a);
void flash_warp_specialized_launch_counted(const AttnArgs *a);

void flash_warp_specialized_resources(int d, int Br, int Bc, int dtype, KernelResources *r);
void flash_warp_specialized_resources_counted(int d, int Br, int Bc, int dtype, KernelResources *r);

/* The same grid, warpgroups and tiles, the consumers issuing their products of S in turn (named barriers). */
void flash_pingpong_launch(const AttnArgs *a);
void flash_pingpong_launch_counted(const AttnArgs *a);

void flash_pingpong_resources(int d, int Br, int Bc, int dtype, KernelResources *r);
void flash_pingpong_resources_counted(int d, int Br, int Bc, int dtype, KernelResources *r);

/* The same again, each consumer issuing S_ij = Q_i K_j^T before P_i,j-1 V_j-1 and running the softmax of S_ij
 * while that product runs. */
void flash_overlap_launch(const AttnArgs *a);
void flash_overlap_launch_counted(const AttnArgs *a);

void flash_overlap_resources(int d, int Br, int Bc, int dtype, KernelResources *r);
void flash_overlap_resources_counted(int d, int Br, int Bc, int dtype, KernelResources *r);

/* The same again, each block taking its work items in a zigzag (odd rounds of the grid right to left). */
void flash_zigzag_launch(const AttnArgs *a);
void flash_zigzag_launch_counted(const AttnArgs *a);

void flash_zigzag_resources(int d, int Br, int Bc, int dtype, KernelResources *r);
void flash_zigzag_resources_counted(int d, int Br, int Bc, int dtype, KernelResources *r);

/* The same again, each block claiming its next work item from a queue (causal: the heads in L2 sections). */
void flash_queue_launch(const AttnArgs *a);
void flash_queue_launch_counted(const AttnArgs *a);

void flash_queue_resources(int d, int Br, int Bc, int dtype, KernelResources *r);
void flash_queue_resources_counted(int d, int Br, int Bc, int dtype, KernelResources *r);

/* The same again, O_i stored by the tensor memory accelerator: the consumers go on while it is written. */
void flash_tma_store_launch(const AttnArgs *a);
void flash_tma_store_launch_counted(const AttnArgs *a);

void flash_tma_store_resources(int d, int Br, int Bc, int dtype, KernelResources *r);
void flash_tma_store_resources_counted(int d, int Br, int Bc, int dtype, KernelResources *r);

/* 9_dispatch.c: no kernel of its own: step 2's launcher at Br = 64 (its tiles, 64 x 64), step 8's at the persistent
 * tiles (tiles.h, "step 9"). Its resources are those of the kernel it runs (fa3_kernel_resources, chapter.c). */
void flash_dispatch_launch(const AttnArgs *a);
void flash_dispatch_launch_counted(const AttnArgs *a);

/* ceiling.cu: wgmma's throughput on this GPU (TFLOP/s, m64n128k16 fp16 from shared memory, every SM full), the
 * chapter's compute roof; for device_chapter_ceiling (common/device.h), which caches it. */
double fa3_measure_wgmma_tflops(const DeviceInfo *info);

#ifdef __cplusplus
}
#endif
#endif
