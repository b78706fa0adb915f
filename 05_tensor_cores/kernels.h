/* kernels.h: chapter 05's launchers (kernels.cu). Each exists twice: the timed build (plain name) and the
 * instrumented build that counts global-memory bytes (_counted; see common/io_count.cuh). */
#ifndef FA_CH05_KERNELS_H
#define FA_CH05_KERNELS_H

#include "attention.h" /* AttnArgs */
#include "device.h"    /* KernelResources */

#ifdef __cplusplus
extern "C" {
#endif

/* Grid (ceil(N/Br), B*H), 2 Br threads per block: one block per query block; Q, K, V, O in a->dtype (fp16 or
 * bf16), L in fp32. */
void flash_tc_launch(const AttnArgs *a);
void flash_tc_launch_counted(const AttnArgs *a);

void flash_tc_resources(int d, int Br, int Bc, int dtype, KernelResources *r);
void flash_tc_resources_counted(int d, int Br, int Bc, int dtype, KernelResources *r);

#ifdef __cplusplus
}
#endif
#endif
