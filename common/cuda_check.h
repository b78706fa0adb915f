/* cuda_check.h: every CUDA runtime call and every launch is checked; a failure prints the call, the file
 * and line, and CUDA's own message, then exits with status 3. Usable from C (.c) and CUDA (.cu). */
#ifndef FA_CUDA_CHECK_H
#define FA_CUDA_CHECK_H

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#define CUDA_CHECK(call)                                                                             \
    do {                                                                                             \
        cudaError_t err_ = (call);                                                                   \
        if (err_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "CUDA error at %s:%d: %s\n  in: %s\n", __FILE__, __LINE__,               \
                    cudaGetErrorString(err_), #call);                                                \
            exit(3);                                                                                 \
        }                                                                                            \
    } while (0)

/* After a <<<...>>> launch: catches bad launch configurations at once. Asynchronous faults inside the kernel
 * surface at the next synchronising call, which is itself checked. */
#define KERNEL_CHECK() CUDA_CHECK(cudaGetLastError())

#endif
