/* chapter.c: chapter 06 for the shared driver: validation (storage types, d, the GPU: sm_90 only), the --model
 * lines, and the attention table.
 *
 *   ./ch06/run [--dtype fp16|bf16] [--causal] [--dim 64|128]
 *              the article's problem size by default; Br = Bc = 64 (one warpgroup's 64 query rows) */
#include "arith.h"
#include "ch06.h"
#include "kernels.h"
#include "tiles.h"

static int validate(const Options *o, const DeviceInfo *dev, char *msg, size_t len) {
    if (o->dtype != DTYPE_FP16 && o->dtype != DTYPE_BF16) {
        snprintf(msg, len, "--dtype %s is not supported: chapter 06 stores fp16 or bf16 (wgmma's 16-bit inputs; "
                           "fp32 is chapters 02-04)", dtype_name(o->dtype));
        return 2;
    }
    if (!fa3_dim_supported(o->d)) {
        snprintf(msg, len, "--dim %d is not supported: chapter 06 has kernels for d = 64 and 128", o->d);
        return 2;
    }
    if (attn_validate(&flash_wgmma_chapter, o, dev, msg, len, "06")) return 2;
    if ((long long)o->B * o->H > 65535) {
        snprintf(msg, len, "--batch %d --heads %d: the grid is (Tr, B*H) and a grid's y dimension is at most 65535",
                 o->B, o->H);
        return 2;
    }
    if (dev && dev->present && !(dev->cc_major == 9 && dev->cc_minor == 0)) {
        snprintf(msg, len, "%s is sm_%d%d: chapter 06's kernels are Hopper's own (wgmma, built for sm_90a alone) "
                           "and run on an sm_90 GPU only; --model and --cpu run anywhere",
                 dev->name, dev->cc_major, dev->cc_minor);
        return 2;
    }
    return 0;
}

static void print_model_extra(FILE *f, const Options *o, const DeviceInfo *dev) {
    char a[32], b[32], c[32];
    const Fa3Wgmma w = fa3_wgmma_count(o);
    fprintf(f, "kernel flash_wgmma; grid (Tr, B*H) = (%lld, %d): %s blocks of %d threads (one warpgroup: 4 warps of 16 "
               "query rows); K/V blocks of %d keys\n",
            ceil_div(o->N, o->Br), o->B * o->H, fmt_bytes(fa3_grid_blocks(o), a, 32), FA3_THREADS, o->Bc);
    fprintf(f, "shared memory per block: %s B (%s), 128-byte swizzle; %s storage, fp32 accumulation and statistics\n",
            fmt_bytes(fa3_smem_bytes(o->Br, o->Bc, o->d), b, 32), FA3_SMEM_FORMULA, dtype_name(o->dtype));
    fprintf(f, "wgmma per K/V block: %d m64n64k16 for S (Q_i, K_j from shared memory) + %d m64n%dk16 for O (P from "
               "registers, V_j from shared memory); %s in all\n",
            o->d / 16, o->Bc / 16, o->d, fmt_bytes(w.total, c, 32));
    if (dev && dev->present) {
        KernelResources r;
        flash_wgmma_resources(o->d, o->dtype, &r);
        resources_print(f, dev, &r, fa3_grid_blocks(o));
    }
}

static void shrink_for_cpu(Options *o) { attn_shrink_for_cpu(o, fa3_flops); }

/* The kernel's arithmetic is chapter 05's (fp32 scores and statistics, P rounded to the storage type), so is
 * the rule. */
const AttnChapter flash_wgmma_chapter = {
    .tiles = {.br_supported = fa3_br_supported, .bc_supported = fa3_bc_supported, .br_sizes = FA3_BR_SIZES,
              .bc_sizes = FA3_BC_SIZES, .smem_bytes = fa3_smem_bytes, .smem_formula = FA3_SMEM_FORMULA},
    .nkernels = 1,
    .timed = {flash_wgmma_launch},
    .counted = {flash_wgmma_launch_counted},
    .stats = ATTN_WRITES_L,
    .tolerances = fa3_tolerances,
    .forward_cpu = fa3_forward_cpu,
};

const Chapter chapter06 = {
    .id = "06",
    .title = "Hopper: FlashAttention-2 with both products as wgmma (warpgroup MMA, sm_90a), fp16/bf16, fp32 "
             "accumulation",
    .features = CLI_CAUSAL | CLI_DTYPE,
    .default_dtype = DTYPE_FP16,
    .default_br = FA3_BR,
    .default_bc = FA3_BC,
    .tensor_cores = 1,
    .validate = validate,
    .models = fa3_models,
    .print_model_extra = print_model_extra,
    .attention = &flash_wgmma_chapter,
    .shrink_for_cpu = shrink_for_cpu,
};
