/* kernels.h: chapter 03's launchers (kernels.cu). Each exists twice: the timed build (plain name) and the
 * instrumented build that counts global-memory bytes (_counted; see common/io_tally.cuh). */
#ifndef FA_CH03_KERNELS_H
#define FA_CH03_KERNELS_H

#include "attention.h" /* AttnArgs */
#include "device.h"    /* KernelResources */

#ifdef __cplusplus
extern "C" {
#endif

/* Grid (ceil(N/Br), B*H), 2 Br threads per block: one block per query block Q_i; writes O and L. */
void flash_v2_launch(const AttnArgs *a);
void flash_v2_launch_counted(const AttnArgs *a);

void flash_v2_resources(int d, int Br, int Bc, KernelResources *r);
void flash_v2_resources_counted(int d, int Br, int Bc, KernelResources *r);

#ifdef __cplusplus
}
#endif
#endif
