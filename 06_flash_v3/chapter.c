/* chapter.c: chapter 06 for the shared driver: validation (storage types, d, the GPU: sm_90 only), the --model
 * lines, and the attention table.
 *
 *   ./ch06/run [--kernel wgmma|tma] [--dtype fp16|bf16] [--causal] [--dim 64|128]
 *              the article's problem size by default; Br = Bc = 64 (one warpgroup's 64 query rows) */
#include "arith.h"
#include "ch06.h"
#include "kernels.h"
#include "tiles.h"

const AttnChapter *fa3_for(const Options *o) { return &fa3_kernels[fa3_kernel_of(o)]; }

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
    if (attn_validate(fa3_for(o), o, dev, msg, len, "06")) return 2;
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
    const int kernel = fa3_kernel_of(o);
    const Fa3Wgmma w = fa3_wgmma_count(o);
    fprintf(f, "kernel %s (--kernel %s); grid (Tr, B*H) = (%lld, %d): %s blocks of %d threads (one warpgroup: 4 warps "
               "of 16 query rows); K/V blocks of %d keys\n",
            fa3_kernel_name(kernel), fa3_kernel_option(kernel), ceil_div(o->N, o->Br), o->B * o->H,
            fmt_bytes(fa3_grid_blocks(o), a, 32), FA3_THREADS, o->Bc);
    fprintf(f, "shared memory per block: %s B (%s), 128-byte swizzle; %s storage, fp32 accumulation and statistics\n",
            fmt_bytes(fa3_for(o)->tiles.smem_bytes(o->Br, o->Bc, o->d), b, 32), fa3_for(o)->tiles.smem_formula,
            dtype_name(o->dtype));
    fprintf(f, "wgmma per K/V block: %d m64n64k16 for S (Q_i, K_j from shared memory) + %d m64n%dk16 for O (P from "
               "registers, V_j from shared memory); %s in all\n",
            o->d / 16, o->Bc / 16, o->d, fmt_bytes(w.total, c, 32));
    fprintf(f, "copies: %s\n",
            kernel == FA3_KERNEL_TMA
                ? "by the tensor memory accelerator (cp.async.bulk.tensor.3d), one instruction per 64-feature panel "
                  "from one thread, completing on an mbarrier per K/V buffer"
                : "16-byte cp.async by every thread, into two K/V buffers");
    if (dev && dev->present) {
        KernelResources r;
        if (kernel == FA3_KERNEL_TMA) flash_tma_resources(o->d, o->dtype, &r);
        else flash_wgmma_resources(o->d, o->dtype, &r);
        resources_print(f, dev, &r, fa3_grid_blocks(o));
    }
}

static void shrink_for_cpu(Options *o) { attn_shrink_for_cpu(o, fa3_flops); }

/* The compute roof: the datasheet's dense fp16 tensor-core peak, what wgmma can reach (device.h); wgmma's own
 * measured ceiling is not there yet. */
static void roof(FILE *f, const DeviceInfo *dev, Ceilings *c) {
    if (device_use_tensor_core_roof(dev, c))
        fprintf(f, "compute roof for this chapter: the datasheet's dense fp16 tensor-core peak, %.0f TFLOP/s (the "
                   "rate wgmma is built for; not measured here)\n", c->fp32_tflops);
}

const ChapterOption ch06_options[] = {
    [CH06_OPT_KERNEL] = {.name = "kernel",
                         .metavar = "K",
                         .values = fa3_kernel_options,
                         .default_index = FA3_KERNEL_DEFAULT,
                         .what = "a kernel of chapter 06",
                         .help = "wgmma | tma: the chapter's steps (default wgmma until they are measured); the\n"
                                 "chapter rejects any other name, listing these"},
    {0}};

/* The kernels' arithmetic is chapter 05's (fp32 scores and statistics, P rounded to the storage type), so is the
 * rule; both kernels share it and the CPU version. */
#define FA3_TABLE(SMEM, FORMULA, LAUNCH, LAUNCH_COUNTED)                                                      \
    {.tiles = {.br_supported = fa3_br_supported, .bc_supported = fa3_bc_supported, .br_sizes = FA3_BR_SIZES,  \
               .bc_sizes = FA3_BC_SIZES, .smem_bytes = SMEM, .smem_formula = FORMULA},                        \
     .nkernels = 1, .timed = {LAUNCH}, .counted = {LAUNCH_COUNTED}, .tolerances = fa3_tolerances,              \
     .forward_cpu = fa3_forward_cpu}

const AttnChapter fa3_kernels[FA3_KERNEL_COUNT] = {
    [FA3_KERNEL_WGMMA] = FA3_TABLE(fa3_smem_bytes, FA3_SMEM_FORMULA, flash_wgmma_launch, flash_wgmma_launch_counted),
    [FA3_KERNEL_TMA] = FA3_TABLE(fa3_tma_smem_bytes, FA3_TMA_SMEM_FORMULA, flash_tma_launch, flash_tma_launch_counted),
};

const Chapter chapter06 = {
    .id = "06",
    .title = "Hopper: FlashAttention with both products as wgmma (warpgroup MMA, sm_90a), then TMA copies; "
             "fp16/bf16, fp32 accumulation",
    .features = CLI_CAUSAL | CLI_DTYPE,
    .options = ch06_options,
    .default_dtype = DTYPE_FP16,
    .default_br = FA3_BR,
    .default_bc = FA3_BC,
    .roof = roof,
    .validate = validate,
    .models = fa3_models,
    .print_model_extra = print_model_extra,
    .attention = fa3_kernels,
    .attention_by = "kernel",
    .shrink_for_cpu = shrink_for_cpu,
};
