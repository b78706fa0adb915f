/* kernels.h: chapter 04's launchers: the chapter's kernel, the paired layout (kernels.cu), and the other
 * layouts it measures (variants.cu). Each exists twice: the timed build (plain name) and the instrumented build
 * that counts global-memory bytes (_counted; see common/io_tally.cuh). */
#ifndef FA_CH04_KERNELS_H
#define FA_CH04_KERNELS_H

#include "attention.h" /* AttnArgs */
#include "device.h"    /* KernelResources */

#ifdef __cplusplus
extern "C" {
#endif

/* kernels.cu: grid (ceil(N/Br), B*H), 2 Br threads per block, K_j in the paired layout; writes O and L. */
void flash_v4_launch(const AttnArgs *a);
void flash_v4_launch_counted(const AttnArgs *a);

void flash_v4_resources(int d, int Br, int Bc, KernelResources *r);
void flash_v4_resources_counted(int d, int Br, int Bc, KernelResources *r);

/* kernels.cu's paired index, run on the host: index[0] the row group of lane, [1] its key lane, [2] the lane
 * it takes its row's L from (first_lane_of_row(lane % 4), as the kernel asks), [3] the offset of K_j[key][x]
 * in K_s, rows of d floats. */
void flash_v4_index(int lane, int d, int key, int x, int index[4]);
void flash_v4_index_counted(int lane, int d, int key, int x, int index[4]);

/* The transposed layout's buffer K^T, [B, H, d, attn_kt_stride(N)] fp32: the chapter's own, at this index of
 * AttnArgs.extra (chapter.c's table declares it). */
enum { FV4_BUF_KT };

/* variants.cu: the transposed layout's setup: K -> K^T (zeros past N) (k_transpose_kernel). */
void k_transpose_launch(const AttnArgs *a);
void k_transpose_launch_counted(const AttnArgs *a);

/* variants.cu: as flash_v4_launch, with K_j in another layout (layouts.h), one launcher each. */
void flash_v4_naive_launch(const AttnArgs *a);
void flash_v4_naive_launch_counted(const AttnArgs *a);
void flash_v4_transposed_launch(const AttnArgs *a);
void flash_v4_transposed_launch_counted(const AttnArgs *a);
void flash_v4_padded_launch(const AttnArgs *a);
void flash_v4_padded_launch_counted(const AttnArgs *a);
void flash_v4_swizzled_launch(const AttnArgs *a);
void flash_v4_swizzled_launch_counted(const AttnArgs *a);

void flash_v4_variant_resources(int d, int Br, int Bc, int layout, KernelResources *r);
void flash_v4_variant_resources_counted(int d, int Br, int Bc, int layout, KernelResources *r);

#ifdef __cplusplus
}
#endif
#endif
