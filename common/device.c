/* device.c: the GPU's attributes, its measured ceilings (cached per GPU) and the datasheet table. */
#include "device.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cuda_check.h"

int device_query(DeviceInfo *info) {
    memset(info, 0, sizeof(*info));
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        cudaGetLastError(); /* clear the sticky "no device" error */
        return 0;
    }
    int dev = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    info->present = 1;
    info->ordinal = dev;
    CUDA_CHECK(cudaDeviceGetAttribute(&info->cc_major, cudaDevAttrComputeCapabilityMajor, dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&info->cc_minor, cudaDevAttrComputeCapabilityMinor, dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&info->sms, cudaDevAttrMultiProcessorCount, dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&info->smem_per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&info->smem_per_block, cudaDevAttrMaxSharedMemoryPerBlock, dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&info->smem_per_block_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&info->l2_bytes, cudaDevAttrL2CacheSize, dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&info->regs_per_sm, cudaDevAttrMaxRegistersPerMultiprocessor, dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&info->max_threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, dev));
    struct cudaDeviceProp prop; /* the name and memory size are still there in CUDA 13 */
    CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
    snprintf(info->name, sizeof(info->name), "%s", prop.name);
    info->global_mem = prop.totalGlobalMem;
    CUDA_CHECK(cudaRuntimeGetVersion(&info->runtime_version));
    CUDA_CHECK(cudaDriverGetVersion(&info->driver_version));
    size_t j = 0;
    for (size_t i = 0; info->name[i] && j + 1 < sizeof(info->slug); i++)
        info->slug[j++] = isalnum((unsigned char)info->name[i]) || info->name[i] == '-' ? info->name[i] : '_';
    info->slug[j] = '\0';
    return 1;
}

size_t device_free_bytes(void) {
    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    return free_b;
}

/* $FA_CACHE_DIR, else ~/.cache/flash-attention-fp, created on demand. */
static void cache_path(const DeviceInfo *info, char *path, size_t len) {
    const char *dir = getenv("FA_CACHE_DIR");
    char fallback[512];
    if (!dir || !*dir) {
        const char *home = getenv("HOME");
        snprintf(fallback, sizeof(fallback), "%s/.cache/flash-attention-fp", home && *home ? home : "/tmp");
        dir = fallback;
    }
    char parent[512];
    snprintf(parent, sizeof(parent), "%s", dir);
    for (char *p = parent + 1; *p; p++) /* mkdir -p */
        if (*p == '/') {
            *p = '\0';
            mkdir(parent, 0755);
            *p = '/';
        }
    mkdir(parent, 0755);
    snprintf(path, len, "%s/ceilings-%s-sm%d%d.txt", dir, info->slug, info->cc_major, info->cc_minor);
}

/* The cache file: "hbm_gbs X fp32_tflops Y", then " mma_tflops Z" once a tensor-core chapter has measured it; then
 * one line "NAME VALUE" per chapter ceiling (device_chapter_ceiling). */
#define CACHE_EXTRA_MAX 4096 /* bytes of chapter ceilings' lines kept when the first line is rewritten */

/* The cache file's first line (with its '\n'; "" when it has none, or none whole) and the lines after it (the
 * chapter ceilings), into first and extra; both empty without a file. */
static void read_cache(const char *path, char *first, size_t flen, char *extra, size_t elen) {
    first[0] = extra[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f) return;
    if (!fgets(first, (int)flen, f) || first[strlen(first) - 1] != '\n') first[0] = '\0';
    const size_t n = first[0] ? fread(extra, 1, elen - 1, f) : 0;
    extra[n] = '\0';
    fclose(f);
}

/* A CUDA tool (compute-sanitizer, Nsight Compute or Systems) loads itself into the program, marked by one of these
 * variables, and slows every kernel: ceilings measured under one are printed but never cached, or they would stand for the
 * GPU's in every later run. */
static int tool_attached(const char *what) {
    /* ncu's injection, and compute-sanitizer's (which sets no CUDA_INJECTION64_PATH: seen on the H200, 2026-12-03) */
    static const char *const marks[] = {"CUDA_INJECTION64_PATH", "NV_SANITIZER_INJECTION_PORT_BASE"};
    for (size_t k = 0; k < sizeof(marks) / sizeof(marks[0]); k++) {
        const char *tool = getenv(marks[k]);
        if (!tool || !*tool) continue;
        fprintf(stderr, "note: a CUDA tool is attached (%s): the %s measured under it are not cached\n", marks[k],
                what);
        return 1;
    }
    return 0;
}

/* The cache file as first (a line, with its '\n') then extra; 0 (errno set) when it could not be written. */
static int write_cache_text(const char *path, const char *first, const char *extra) {
    FILE *f = fopen(path, "w");
    if (!f) return 0;
    const int ok = fprintf(f, "%s%s", first, extra) >= 0;
    return fclose(f) == 0 && ok;
}

static void write_cache(const char *path, const Ceilings *c) {
    char first[512], old[512], extra[CACHE_EXTRA_MAX];
    read_cache(path, old, sizeof(old), extra, sizeof(extra));
    int n = snprintf(first, sizeof(first), "hbm_gbs %.1f fp32_tflops %.2f", c->hbm_gbs, c->fp32_tflops);
    if (c->mma_tflops > 0) n += snprintf(first + n, sizeof(first) - n, " mma_tflops %.1f", c->mma_tflops);
    snprintf(first + n, sizeof(first) - n, "\n");
    if (tool_attached("ceilings")) return;
    if (!write_cache_text(path, first, extra))
        fprintf(stderr, "note: cannot write %s (%s); ceilings will be measured again next run\n", path,
                strerror(errno));
}

double device_chapter_ceiling(const DeviceInfo *info, const char *name, const char *what,
                              double (*measure)(const DeviceInfo *info)) {
    char path[768], first[512], extra[CACHE_EXTRA_MAX];
    cache_path(info, path, sizeof(path));
    read_cache(path, first, sizeof(first), extra, sizeof(extra));
    const char *remeasure = getenv("FA_REMEASURE");
    const int again = remeasure && *remeasure == '1';
    char kept[CACHE_EXTRA_MAX] = ""; /* the other chapters' lines, then this one */
    for (char *line = strtok(extra, "\n"); line; line = strtok(NULL, "\n")) {
        char key[64];
        double v;
        if (sscanf(line, "%63s %lf", key, &v) == 2 && strcmp(key, name) == 0) {
            if (!again && v > 0) return v;
            continue;
        }
        strncat(kept, line, sizeof(kept) - strlen(kept) - 2);
        strcat(kept, "\n");
    }
    fprintf(stderr, "measuring this GPU's %s once; cached in %s\n", what, path);
    const double value = measure(info);
    const size_t n = strlen(kept);
    snprintf(kept + n, sizeof(kept) - n, "%s %.1f\n", name, value);
    /* after the first line as it is (device_ceilings wrote it) */
    if (tool_attached(what)) return value;
    if (!first[0])
        fprintf(stderr, "note: cannot write %s (no ceilings line first); the %s will be measured again next run\n",
                path, what);
    else if (!write_cache_text(path, first, kept))
        fprintf(stderr, "note: cannot write %s (%s); the %s will be measured again next run\n", path,
                strerror(errno), what);
    return value;
}

Ceilings device_ceilings(const DeviceInfo *info) {
    Ceilings c = {0};
    char path[768];
    cache_path(info, path, sizeof(path));
    const char *remeasure = getenv("FA_REMEASURE");
    FILE *f = (remeasure && *remeasure == '1') ? NULL : fopen(path, "r");
    if (f) {
        const int got = fscanf(f, "hbm_gbs %lf fp32_tflops %lf mma_tflops %lf", &c.hbm_gbs, &c.fp32_tflops,
                               &c.mma_tflops);
        if (got >= 2 && c.hbm_gbs > 0 && c.fp32_tflops > 0) c.cached = 1;
        if (got < 3 || !(c.mma_tflops > 0)) c.mma_tflops = 0;
        fclose(f);
        if (c.cached) return c;
    }
    fprintf(stderr, "measuring this GPU's ceilings once (copy bandwidth, FFMA peak); cached in %s\n", path);
    c.hbm_gbs = measure_copy_gbs();
    c.fp32_tflops = measure_fp32_tflops(info->sms);
    write_cache(path, &c);
    return c;
}

/* Vendor datasheet numbers (SXM parts for A100/H100/H200); fp16 tensor-core rates are dense. */
static const DatasheetRow DATASHEET[] = {
    {"GeForce RTX 2070 (the article's GPU)", "2070", "sm_75", 448.0, 7.5, 59.7, 64, 4},
    {"Tesla T4", "T4", "sm_75", 320.0, 8.1, 65.0, 64, 4},
    {"A100 SXM4 80GB", "A100", "sm_80", 2039.0, 19.5, 312.0, 164, 40},
    {"H100 SXM5", "H100", "sm_90", 3350.0, 67.0, 989.0, 228, 50},
    {"H200 SXM", "H200", "sm_90", 4800.0, 67.0, 989.0, 228, 60},
    {NULL, NULL, NULL, 0, 0, 0, 0, 0},
};

int device_use_tensor_core_roof(const DeviceInfo *info, Ceilings *c) {
    if (!(c->mma_tflops > 0)) {
        char path[768];
        cache_path(info, path, sizeof(path));
        fprintf(stderr, "measuring this GPU's mma.sync throughput once; cached in %s\n", path);
        c->mma_tflops = measure_mma_tflops(info->sms, info->cc_major, info->cc_minor);
        write_cache(path, c);
    }
    const DatasheetRow *r = datasheet_find(info->name);
    if (!r || r->fp16_tc_tflops <= 0) return 0;
    c->fp32_tflops = r->fp16_tc_tflops;
    c->tensor_cores = 1;
    return 1;
}

const DatasheetRow *datasheet_find(const char *name) {
    for (const DatasheetRow *r = DATASHEET; r->gpu; r++)
        if (strstr(name, r->key)) return r;
    return NULL;
}

void datasheet_print(FILE *f) {
    fprintf(f, "datasheet (vendor numbers; the programs measure their own ceilings on the GPU they run on):\n");
    fprintf(f, "  %-38s %-6s %9s %11s %17s %14s %6s\n", "GPU", "arch", "HBM GB/s", "FP32 TFLOP", "FP16 tensor TFLOP",
            "FP32 ridge F/B", "L2 MB");
    for (const DatasheetRow *r = DATASHEET; r->gpu; r++)
        fprintf(f, "  %-38s %-6s %9.0f %11.1f %17.0f %14.1f %6d\n", r->gpu, r->arch, r->hbm_gbs, r->fp32_tflops,
                r->fp16_tc_tflops, r->fp32_tflops * 1e3 / r->hbm_gbs, r->l2_mb);
}

void device_use_mma_roof(FILE *f, const DeviceInfo *info, Ceilings *c) {
    if (device_use_tensor_core_roof(info, c))
        fprintf(f, "compute roof: the datasheet's dense fp16 tensor-core peak, %.0f TFLOP/s (not measured: on Hopper "
                   "only wgmma reaches it)\n", c->fp32_tflops);
    fprintf(f, "mma.sync ceiling (measured: fp16 in, fp32 accumulate, the instruction these kernels use): %.0f TFLOP/s",
            c->mma_tflops);
    if (c->tensor_cores) fprintf(f, ", %.0f%% of the datasheet's peak", 100 * c->mma_tflops / c->fp32_tflops);
    fprintf(f, "\n");
}

void device_print(FILE *f, const DeviceInfo *info, const Ceilings *c) {
    fprintf(f, "GPU: %s (sm_%d%d), %d SMs, L2 %d MB, shared memory %d KB/SM (%d KB/block opt-in), "
           "%d regs/SM, %.1f GB\n",
           info->name, info->cc_major, info->cc_minor, info->sms, info->l2_bytes >> 20, info->smem_per_sm >> 10,
           info->smem_per_block_optin >> 10, info->regs_per_sm, info->global_mem / 1e9);
    fprintf(f, "CUDA runtime %d.%d, driver %d.%d\n", info->runtime_version / 1000, (info->runtime_version % 1000) / 10,
           info->driver_version / 1000, (info->driver_version % 1000) / 10);
    if (c)
        fprintf(f, "ceilings (measured%s): HBM copy %.0f GB/s, FP32 FFMA %.1f TFLOP/s, ridge %.1f FLOP/B\n",
               c->cached ? ", cached" : "", c->hbm_gbs, c->fp32_tflops, c->fp32_tflops * 1e3 / c->hbm_gbs);
    const DatasheetRow *r = datasheet_find(info->name);
    if (c && r)
        fprintf(f, "datasheet (%s): HBM %.0f GB/s, FP32 %.1f TFLOP/s: measured copy %.0f%%, FFMA %.0f%% of them\n",
                r->gpu, r->hbm_gbs, r->fp32_tflops, 100.0 * c->hbm_gbs / r->hbm_gbs,
                100.0 * c->fp32_tflops / r->fp32_tflops);
}

void kernel_resources(const void *kernel, int threads, size_t smem_bytes, KernelResources *r) {
    struct cudaFuncAttributes attr;
    CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
    r->threads = threads;
    r->smem_bytes = smem_bytes;
    r->regs = attr.numRegs;
    r->local_bytes = (int)attr.localSizeBytes;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&r->blocks_per_sm, kernel, threads, smem_bytes));
}
