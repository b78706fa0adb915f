/* ptx.cuh: the PTX chapter 06's kernels use. The wrappers are in common/ptx_sm90.cuh (wgmma, its fences, the proxy
 * fence; the tensor memory accelerator's copy and the mbarrier it completes on, for step 2's copies, and its store,
 * step 8's; setmaxnreg, step 3's; named barriers, step 4's) and common/ptx_sm80.cuh (shared addresses, cp.async for
 * step 1's copies, ex2); this file adds the numbering of the named barriers the steps use. The descriptors wgmma reads
 * its shared operands through are built in common/wgmma_layout.h, where the host's tests reach them too. */
#ifndef FA_CH06_PTX_CUH
#define FA_CH06_PTX_CUH

#include "ptx_sm90.cuh"

/* Step 4's turns: named barrier FA3_PP_TURN + c is consumer c's (barrier 0 is __syncthreads's). */
#define FA3_PP_TURN 1

#endif
