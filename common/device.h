/* device.h: what the GPU is and how fast it can go. Attributes come from cudaDeviceGetAttribute (CUDA 13
 * dropped several cudaDeviceProp fields). The two roofline ceilings are *measured* on this GPU: HBM
 * bandwidth with a large copy kernel (bytes read + bytes written) and FP32 FMA throughput with an FFMA
 * loop; they are cached per GPU in $FA_CACHE_DIR (default ~/.cache/flash-attention-fp) so that runs do not
 * re-measure every time. A datasheet table gives the vendor's numbers for comparison. */
#ifndef FA_DEVICE_H
#define FA_DEVICE_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int present;              /* 0: no CUDA device (CPU mode)                      */
    int ordinal;
    char name[256];
    char slug[128];           /* name with spaces and odd characters as '_'      */
    int cc_major, cc_minor;
    int sms;
    int smem_per_sm;          /* bytes                                             */
    int smem_per_block;       /* bytes, default (48 KB)                            */
    int smem_per_block_optin; /* bytes, with cudaFuncAttributeMaxDynamicSharedMemorySize */
    int l2_bytes;
    int regs_per_sm;
    int max_threads_per_sm;
    size_t global_mem;
    int runtime_version, driver_version;
} DeviceInfo;

typedef struct {
    double hbm_gbs;     /* measured copy bandwidth, (read + write) bytes / s / 1e9 */
    double fp32_tflops; /* the compute roof: measured FFMA throughput, 2 FLOP per FMA, or (tensor_cores) the
                           datasheet's dense fp16 tensor-core peak                                        */
    double mma_tflops;  /* measured mma.sync fp16 throughput (fp32 accumulate), the ceiling of the warp-level
                           tensor-core instruction; 0 until device_use_tensor_core_roof measures it      */
    int cached;         /* 1 when read from the cache file                         */
    int tensor_cores;   /* 1: the compute roof is the tensor cores' (device_use_tensor_core_roof)          */
    const char *roof_what; /* optional: what the compute roof is, in the report's words ("wgmma's measured
                              ceiling"), where a chapter puts one of its own; NULL: the datasheet's peak     */
} Ceilings;

typedef struct {
    const char *gpu;
    const char *key; /* a part of the name the driver reports, e.g. "H200" */
    const char *arch;
    double hbm_gbs;
    double fp32_tflops;
    double fp16_tc_tflops; /* dense tensor-core fp16 */
    int smem_per_sm_kb;
    int l2_mb;
} DatasheetRow;

/* A chapter's own ceiling: the rate an instruction of the chapter reaches at best on this GPU, measured by the
 * chapter's code (measure, run once) and cached with the others under `name` (a word: letters, digits, '_'), so
 * that later runs read it. `what` says what is measured, for the line printed when it is. FA_REMEASURE=1
 * measures it again; under a CUDA tool (compute-sanitizer, ncu) it is measured but not cached. */
double device_chapter_ceiling(const DeviceInfo *info, const char *name, const char *what,
                              double (*measure)(const DeviceInfo *info));

/* Returns 1 and fills *info when a CUDA device is usable, else 0 (info->present = 0). Never exits. */
int device_query(DeviceInfo *info);

/* Measures (or reads from the cache) the two ceilings. */
Ceilings device_ceilings(const DeviceInfo *info);

/* For a tensor-core chapter: the compute roof becomes the datasheet's dense fp16 tensor-core peak of this GPU,
 * what the hardware can do (on Hopper only through wgmma); and c->mma_tflops is measured (cached beside the
 * other ceilings): what the mma.sync instruction can do. Returns 0 and leaves the roof alone when the
 * datasheet does not know this GPU (mma_tflops is measured either way). */
int device_use_tensor_core_roof(const DeviceInfo *info, Ceilings *c);
/* The roof of the mma.sync kernels: device_use_tensor_core_roof, then a line on f for each of the two numbers
 * (the datasheet's peak, the roof where the datasheet knows the GPU; the instruction's measured ceiling). */
void device_use_mma_roof(FILE *f, const DeviceInfo *info, Ceilings *c);

/* Bytes free on the device right now. */
size_t device_free_bytes(void);

/* The row whose key is part of `name` (a device name, or a key such as "A100"), or NULL. */
const DatasheetRow *datasheet_find(const char *name);
/* The whole table, with the ridge point of each GPU. */
void datasheet_print(FILE *f);

void device_print(FILE *f, const DeviceInfo *info, const Ceilings *c);

/* What a compiled kernel uses on this GPU, and how many of its blocks fit on an SM. */
typedef struct {
    int threads;       /* per block                                                         */
    size_t smem_bytes; /* dynamic shared memory per block                                   */
    int regs;          /* registers per thread                                              */
    int local_bytes;   /* local memory per thread (spills)                                  */
    int blocks_per_sm; /* resident blocks per SM (cudaOccupancyMaxActiveBlocksPerMultiprocessor) */
} KernelResources;

/* Fills *r for `kernel` (a __global__ function's address) launched with `threads` and `smem_bytes`. */
void kernel_resources(const void *kernel, int threads, size_t smem_bytes, KernelResources *r);

/* Implemented in ceilings.cu. */
double measure_copy_gbs(void);
double measure_fp32_tflops(int sms);
double measure_mma_tflops(int sms, int cc_major, int cc_minor); /* 0 before sm_75 */

#ifdef __cplusplus
}
#endif
#endif
