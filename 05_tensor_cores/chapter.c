/* chapter.c: chapter 05 for the shared driver: validation (tiles, d, storage types, the GPU's architecture),
 * the --model lines, and the table of parts.
 *
 *   ./ch05/run [--dtype fp16|bf16] [--causal] [--br 64|128]     the article's problem size by default */
#include "ch05.h"
#include "kernels.h"
#include "tiles.h"

static int validate(const Options *o, const DeviceInfo *dev, char *msg, size_t len) {
    if (o->dtype != DTYPE_FP16 && o->dtype != DTYPE_BF16) {
        snprintf(msg, len, "--dtype %s is not supported: chapter 05 stores fp16 or bf16 (tensor cores; fp32 is "
                           "chapters 02-04)", dtype_name(o->dtype));
        return 2;
    }
    if (!dim_supported(o->d)) {
        snprintf(msg, len, "--dim %d is not supported: chapter 05 has kernels for d = 64 and 128", o->d);
        return 2;
    }
    if (attn_validate(&flash_tc, o, dev, msg, len, "05")) return 2;
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
    fprintf(f, "grid (Tr, B*H) = (%lld, %d): %s blocks of %d threads (%d warps of 16 query rows); K/V blocks of %d keys\n",
            ceil_div(o->N, o->Br), o->B * o->H, fmt_bytes(flash_tc_grid_blocks(o), a, 32), threads_per_block(o->Br),
            o->Br / TC_ROWS_PER_WARP, o->Bc);
    fprintf(f, "shared memory per block: %s B (%s); %s storage, fp32 accumulation and statistics\n",
            fmt_bytes(smem_bytes(o->Br, o->Bc, o->d), b, 32), SMEM_FORMULA, dtype_name(o->dtype));
    if (dev && dev->present) {
        const int cc = 10 * dev->cc_major + dev->cc_minor;
        fprintf(f, "tensor-core path for sm_%d: %s\n", cc,
                cc >= 80 ? "mma.sync.m16n8k16, ldmatrix, cp.async double buffering"
                         : "mma.sync.m16n8k8 (two per k16), ldmatrix, plain loads (fp16 only)");
        KernelResources r;
        flash_tc_resources(o->d, o->Br, o->Bc, o->dtype, &r);
        resources_print(f, dev, &r, flash_tc_grid_blocks(o));
    }
}

static void shrink_for_cpu(Options *o) { attn_shrink_for_cpu(o, flash_tc_flops); }

const AttnChapter flash_tc = {
    .tiles = {.br_supported = br_supported, .bc_supported = bc_supported, .br_sizes = BR_SIZES,
              .bc_sizes = BC_SIZES, .smem_bytes = smem_bytes, .smem_formula = SMEM_FORMULA},
    .nkernels = 1,
    .timed = {flash_tc_launch},
    .counted = {flash_tc_launch_counted},
    .stats = ATTN_WRITES_L,
    .tolerances = flash_tc_tolerances,
    .forward_cpu = flash_tc_forward_cpu,
};

const Chapter chapter05 = {
    .id = "05",
    .title = "tensor cores: FlashAttention-2 with mma.sync in fp16/bf16, fp32 accumulation",
    .features = CLI_TILES | CLI_CAUSAL | CLI_DTYPE,
    .default_dtype = DTYPE_FP16,
    .default_br = 64,
    .default_bc = TC_BC,
    .tensor_cores = 1,
    .validate = validate,
    .models = flash_tc_models,
    .print_model_extra = print_model_extra,
    .attention = &flash_tc,
    .shrink_for_cpu = shrink_for_cpu,
};
