/* kernels.h: chapter 04's launchers (kernels.cu). Each exists twice: the timed build (plain name) and the
 * instrumented build that counts global-memory bytes (_counted; see common/io_tally.cuh). */
#ifndef FA_CH04_KERNELS_H
#define FA_CH04_KERNELS_H

#include "attention.h" /* AttnArgs */
#include "device.h"    /* KernelResources */

#ifdef __cplusplus
extern "C" {
#endif

/* The transposed layout's buffer K^T, [B, H, d, attn_kt_stride(N)] fp32: the chapter's own, at this index of
 * AttnArgs.extra (chapter.c's table declares it). */
enum { FV4_BUF_KT };

/* The transposed layout's setup: K -> K^T (zeros past N) (k_transpose_kernel). */
void k_transpose_launch(const AttnArgs *a);
void k_transpose_launch_counted(const AttnArgs *a);

/* Grid (ceil(N/Br), B*H), 2 Br threads per block, one launcher per layout (layouts.h); writes O and L. */
void flash_v4_naive_launch(const AttnArgs *a);
void flash_v4_naive_launch_counted(const AttnArgs *a);
void flash_v4_transposed_launch(const AttnArgs *a);
void flash_v4_transposed_launch_counted(const AttnArgs *a);
void flash_v4_padded_launch(const AttnArgs *a);
void flash_v4_padded_launch_counted(const AttnArgs *a);
void flash_v4_swizzled_launch(const AttnArgs *a);
void flash_v4_swizzled_launch_counted(const AttnArgs *a);
void flash_v4_paired_launch(const AttnArgs *a);
void flash_v4_paired_launch_counted(const AttnArgs *a);

void flash_v4_resources(int d, int Br, int Bc, int layout, KernelResources *r);
void flash_v4_resources_counted(int d, int Br, int Bc, int layout, KernelResources *r);

#ifdef __cplusplus
}
#endif
#endif
