/* chapter.c: chapter 05 for the shared driver: validation (the kernel, tiles, d, storage types, the GPU's
 * architecture), the --model lines, and one attention table per kernel.
 *
 *   ./ch05/run [--kernel wmma|mma|mma_async] [--dtype fp16|bf16] [--causal] [--br 64|128]
 *                                            the article's problem size by default; --kernel wmma: Br = 64 only */
#include <string.h>

#include "ch05.h"
#include "kernels.h"
#include "tiles.h"
#include "wmma_tiles.h"

const AttnChapter *flash_tc_for(const Options *o) {
    const int k = tc_kernel_of(o);
    return &flash_tc_kernels[k >= 0 ? k : TC_KERNEL_DEFAULT];
}

static int validate(const Options *o, const DeviceInfo *dev, char *msg, size_t len) {
    const int kernel = tc_kernel_of(o);
    if (kernel < 0) {
        snprintf(msg, len, "--kernel %s is not a kernel of chapter 05: one of %s", o->kernel, TC_KERNEL_NAMES);
        return 2;
    }
    if (kernel == TC_KERNEL_WMMA && (!wmma_br_supported(o->Br) || !wmma_bc_supported(o->Bc))) {
        snprintf(msg, len, "--kernel wmma has one tile, Br = Bc = 64: --br %d --bc %d is not supported (Br = 128 is "
                           "for --kernel mma and mma_async)", o->Br, o->Bc);
        return 2;
    }
    if (o->dtype != DTYPE_FP16 && o->dtype != DTYPE_BF16) {
        snprintf(msg, len, "--dtype %s is not supported: chapter 05 stores fp16 or bf16 (tensor cores; fp32 is "
                           "chapters 02-04)", dtype_name(o->dtype));
        return 2;
    }
    if (!dim_supported(o->d)) {
        snprintf(msg, len, "--dim %d is not supported: chapter 05 has kernels for d = 64 and 128", o->d);
        return 2;
    }
    if (attn_validate(flash_tc_for(o), o, dev, msg, len, "05")) return 2;
    if ((long long)o->B * o->H > 65535) {
        snprintf(msg, len, "--batch %d --heads %d: the grid is (Tr, B*H) and a grid's y dimension is at most 65535",
                 o->B, o->H);
        return 2;
    }
    if (dev && dev->present) {
        const int cc = 10 * dev->cc_major + dev->cc_minor;
        if (cc < 75) {
            snprintf(msg, len, "%s is sm_%d: chapter 05's tensor-core instructions need sm_75 or later", dev->name, cc);
            return 2;
        }
        if (o->dtype == DTYPE_BF16 && cc < 80) {
            snprintf(msg, len, "--dtype bf16 needs sm_80 or later (%s is sm_%d): use --dtype fp16", dev->name, cc);
            return 2;
        }
    }
    return 0;
}

static void print_model_extra(FILE *f, const Options *o, const DeviceInfo *dev) {
    char a[32], b[32];
    const int kernel = tc_kernel_of(o), wmma = kernel == TC_KERNEL_WMMA;
    const int threads = wmma ? WMMA_THREADS : threads_per_block(o->Br);
    fprintf(f, "kernel %s (--kernel %s); grid (Tr, B*H) = (%lld, %d): %s blocks of %d threads (%d warps of 16 query "
               "rows); K/V blocks of %d keys\n",
            tc_kernel_name(kernel), tc_kernel_option(kernel), ceil_div(o->N, o->Br), o->B * o->H,
            fmt_bytes(flash_tc_grid_blocks(o), a, 32), threads, threads / 32, o->Bc);
    fprintf(f, "shared memory per block: %s B (%s); %s storage, fp32 accumulation and statistics\n",
            fmt_bytes(flash_tc_for(o)->tiles.smem_bytes(o->Br, o->Bc, o->d), b, 32), flash_tc_for(o)->tiles.smem_formula,
            dtype_name(o->dtype));
    if (wmma)
        fprintf(f, "tiles: Br = %d, Bc = %d only; S_ij = Q_i K_j^T and O_i += P_ij V_j as 16x16x16 wmma fragments, "
                   "S_ij and P_ij through shared memory\n", WMMA_BR, WMMA_BC);
    if (dev && dev->present) {
        const int cc = 10 * dev->cc_major + dev->cc_minor;
        fprintf(f, "tensor-core path for sm_%d: %s\n", cc,
                wmma       ? "nvcuda::wmma 16x16x16 (fp16 and, from sm_80, bf16), plain 16-byte loads"
                : cc >= 80 ? "mma.sync.m16n8k16, ldmatrix, cp.async double buffering"
                           : "mma.sync.m16n8k8 (two per k16), ldmatrix, plain loads (fp16 only)");
        KernelResources r;
        if (wmma) flash_wmma_resources(o->d, o->Br, o->Bc, o->dtype, &r);
        else flash_tc_resources(o->d, o->Br, o->Bc, o->dtype, &r);
        resources_print(f, dev, &r, flash_tc_grid_blocks(o));
    }
}

static void shrink_for_cpu(Options *o) { attn_shrink_for_cpu(o, flash_tc_flops); }

#define TC_TILES                                                                                              \
    {.br_supported = br_supported, .bc_supported = bc_supported, .br_sizes = BR_SIZES, .bc_sizes = BC_SIZES,   \
     .smem_bytes = smem_bytes, .smem_formula = SMEM_FORMULA}
/* mma and mma_async: kernels.cu's kernel for both, until each has its own. */
#define TC_KERNEL(K)                                                                                          \
    [K] = {.tiles = TC_TILES, .nkernels = 1, .timed = {flash_tc_launch}, .counted = {flash_tc_launch_counted}, \
           .stats = ATTN_WRITES_L, .variant = K, .tolerances = flash_tc_tolerances,                           \
           .forward_cpu = flash_tc_forward_cpu}

const AttnChapter flash_tc_kernels[TC_KERNEL_COUNT] = {
    /* wmma: the same arithmetic (fp32 scores and statistics, P rounded to the storage type), so the same CPU
     * version and rule */
    [TC_KERNEL_WMMA] = {.tiles = {.br_supported = wmma_br_supported, .bc_supported = wmma_bc_supported,
                                  .br_sizes = WMMA_BR_SIZES, .bc_sizes = WMMA_BC_SIZES,
                                  .smem_bytes = wmma_smem_bytes, .smem_formula = WMMA_SMEM_FORMULA},
                        .nkernels = 1,
                        .timed = {flash_wmma_launch},
                        .counted = {flash_wmma_launch_counted},
                        .stats = ATTN_WRITES_L,
                        .variant = TC_KERNEL_WMMA,
                        .tolerances = flash_tc_tolerances,
                        .forward_cpu = flash_tc_forward_cpu},
    TC_KERNEL(TC_KERNEL_MMA),
    TC_KERNEL(TC_KERNEL_MMA_ASYNC),
};

const Chapter chapter05 = {
    .id = "05",
    .title = "tensor cores: FlashAttention-2 with wmma, then mma.sync, in fp16/bf16, fp32 accumulation",
    .features = CLI_TILES | CLI_CAUSAL | CLI_DTYPE | CLI_KERNEL,
    .default_dtype = DTYPE_FP16,
    .default_br = 64,
    .default_bc = TC_BC,
    .tensor_cores = 1,
    .validate = validate,
    .models = flash_tc_models,
    .print_model_extra = print_model_extra,
    .attention_for = flash_tc_for,
    .shrink_for_cpu = shrink_for_cpu,
};
