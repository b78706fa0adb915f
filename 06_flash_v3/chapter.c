/* chapter.c: chapter 06 for the shared driver: validation (storage types, d, the GPU: sm_90 only), the --model
 * lines, and the attention table.
 *
 *   ./ch06/run [--kernel wgmma|tma|warp_specialized|pingpong|overlap|zigzag|queue|tma_store|dispatch]
 *              [--dtype fp16|bf16] [--causal] [--dim 64|128] [--br] [--bc]
 *              the article's problem size by default; each kernel's own tiles: Br = Bc = 64 for wgmma and tma (one
 *              warpgroup's 64 query rows); for warp_specialized .. tma_store 128 x 128 (two consumer warpgroups),
 *              192 x 128 (three) at d = 64; for dispatch 64 x 64 (tma's kernel) at d = 64 up to 1024 tokens, else
 *              tma_store's */
#include <limits.h>

#include "arith.h"
#include "ch06.h"
#include "kernels.h"
#include "tiles.h"

const AttnChapter *fa3_for(const Options *o) { return &fa3_kernels[fa3_kernel_of(o)]; }

void fa3_kernel_resources(int kernel, int d, int Br, int Bc, int dtype, KernelResources *r) {
    kernel = fa3_kernel_runs(kernel, Br); /* dispatch: the kernel it runs at this tile */
    if (kernel == FA3_KERNEL_TMA_STORE) flash_tma_store_resources(d, Br, Bc, dtype, r);
    else if (kernel == FA3_KERNEL_QUEUE) flash_queue_resources(d, Br, Bc, dtype, r);
    else if (kernel == FA3_KERNEL_ZIGZAG) flash_zigzag_resources(d, Br, Bc, dtype, r);
    else if (kernel == FA3_KERNEL_OVERLAP) flash_overlap_resources(d, Br, Bc, dtype, r);
    else if (kernel == FA3_KERNEL_PINGPONG) flash_pingpong_resources(d, Br, Bc, dtype, r);
    else if (kernel == FA3_KERNEL_WARP_SPECIALIZED) flash_warp_specialized_resources(d, Br, Bc, dtype, r);
    else if (kernel == FA3_KERNEL_TMA) flash_tma_resources(d, dtype, r);
    else flash_wgmma_resources(d, dtype, r);
}

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
    const int kernel = fa3_kernel_runs(fa3_kernel_of(o), o->Br); /* dispatch: the kernel it runs at this tile */
    if (fa3_kernel_of(o) == FA3_KERNEL_DISPATCH && fa3_dispatch_small(o->Br) && !fa3_bc_supported(o->Bc)) {
        snprintf(msg, len, "--br %d --bc %d: dispatch runs tma's kernel at Br = %d, compiled for Bc = %d only", o->Br,
                 o->Bc, FA3_BR, FA3_BC);
        return 2;
    }
    if (fa3_kernel_persistent(kernel) && !fa3_ws_tile_compiled(o->Br, o->Bc, o->d)) {
        snprintf(msg, len, "--br %d --bc %d --dim %d: %s is compiled for Br = 128 with Bc = 64 or 128, and Br = 192 "
                           "(three consumer warpgroups) with Bc = 128 at d = 64 only",
                 o->Br, o->Bc, o->d, fa3_kernel_option(kernel));
        return 2;
    }
    /* the kernel counts items in an int, up to gridDim.x past the last: room for a grid of 1024 blocks above */
    const long long max_items = (long long)INT_MAX - 1024;
    if (fa3_kernel_persistent(kernel) && fa3_grid_blocks(o) > max_items) {
        snprintf(msg, len, "--batch %d --heads %d --seq %d: %lld work items (Q tiles x heads), more than the %lld "
                           "the kernel counts",
                 o->B, o->H, o->N, fa3_grid_blocks(o), max_items);
        return 2;
    }
    if (!fa3_kernel_persistent(kernel) && attn_validate_heads_grid(o, msg, len)) return 2;
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
    const int kernel = fa3_kernel_runs(fa3_kernel_of(o), o->Br), consumers = o->Br / 64;
    if (fa3_kernel_of(o) == FA3_KERNEL_DISPATCH)
        fprintf(f, "dispatch: the kernel by the tile, the tile by the problem: Br = %d runs %s's kernel (by default "
                   "at d = 64 up to N = %d), Br = 128 or 192 %s's; at Br = %d it is %s's\n",
                FA3_BR, fa3_kernel_option(FA3_KERNEL_TMA), FA3_DISPATCH_SHORT, fa3_kernel_option(FA3_KERNEL_TMA_STORE),
                o->Br, fa3_kernel_option(kernel));
    const Fa3Wgmma w = fa3_wgmma_count(o);
    long long grid = fa3_grid_blocks(o);
    if (fa3_kernel_persistent(kernel)) {
        fprintf(f, "kernel %s (--kernel %s); work items (Tr x B*H) = %lld x %d = %s (a Q tile of %d rows of one "
                   "head), taken in turn by a persistent grid of one block per SM (min(items, SMs)); blocks of %d "
                   "threads: a producer warpgroup (copies) and %d consumer warpgroups of 64 query rows; K/V blocks "
                   "of %d keys\n",
                fa3_kernel_name(kernel), fa3_kernel_option(kernel), ceil_div(o->N, o->Br), o->B * o->H,
                fmt_bytes(grid, a, 32), o->Br, FA3_WS_THREADS(o->Br), consumers, o->Bc);
        if (dev && dev->present && dev->sms < grid) grid = dev->sms;
    } else {
        fprintf(f, "kernel %s (--kernel %s); grid (Tr, B*H) = (%lld, %d): %s blocks of %d threads (one warpgroup: 4 "
                   "warps of 16 query rows); K/V blocks of %d keys\n",
                fa3_kernel_name(kernel), fa3_kernel_option(kernel), ceil_div(o->N, o->Br), o->B * o->H,
                fmt_bytes(grid, a, 32), FA3_THREADS, o->Bc);
    }
    fprintf(f, "shared memory per block: %s B (%s), 128-byte swizzle; %s storage, fp32 accumulation and statistics\n",
            fmt_bytes(fa3_kernels[kernel].tiles.smem_bytes(o->Br, o->Bc, o->d), b, 32),
            fa3_kernels[kernel].tiles.smem_formula,
            dtype_name(o->dtype));
    char each[64] = "";
    if (consumers > 1) snprintf(each, sizeof(each), ", in each of %d consumer warpgroups", consumers);
    fprintf(f, "wgmma per K/V block: %d m64n%dk16 for S (Q_i, K_j from shared memory) + %d m64n%dk16 for O (P from "
               "registers, V_j from shared memory)%s; %s in all\n",
            o->d / 16, o->Bc, o->Bc / 16, o->d, each, fmt_bytes(w.total, c, 32));
    if (kernel >= FA3_KERNEL_PINGPONG)
        fprintf(f, "turns: the consumers issue their products %s one after another (a named barrier each, "
                   "bar.sync to take the turn, bar.arrive to hand it on), so that one's softmax runs beside the "
                   "other's products\n", kernel == FA3_KERNEL_PINGPONG ? "of S" : "(S_ij, then P_i,j-1 V_j-1)");
    if (kernel >= FA3_KERNEL_OVERLAP)
        fprintf(f, "overlap: in each consumer S_ij = Q_i K_j^T is issued before O_i += P_i,j-1 V_j-1, and the softmax "
                   "of S_ij runs while that product does (wgmma.wait_group 1)\n");
    if (kernel >= FA3_KERNEL_OVERLAP)
        fprintf(f, "copies: by the tensor memory accelerator from one producer thread, K_j into a ring of %d stages "
                   "and V_j into one of %d (a full and an empty mbarrier each, K_j released once S_ij is done); Q_i "
                   "with its own pair, the next item's copied while the last K/V blocks of this one are computed\n",
                fa3_ov_k_stages(o->Br, o->Bc, o->d), fa3_ov_v_stages(o->Br, o->Bc, o->d));
    if (kernel >= FA3_KERNEL_TMA_STORE)
        fprintf(f, "epilogue: each consumer writes its 64 rows of O_i into shared memory and one of its threads hands "
                   "them to the tensor memory accelerator (%d store%s of 64 rows x 64 features), the consumer going "
                   "on to its next item while they are written\n", o->d / 64, o->d / 64 > 1 ? "s" : "");
    else if (fa3_kernel_persistent(kernel))
        fprintf(f, "copies: by the tensor memory accelerator from one producer thread, into a ring of %d stages of "
                   "K_j, V_j (a full and an empty mbarrier each); Q_i with its own pair, the next item's copied while "
                   "the last K/V blocks of this one are computed\n",
                fa3_ws_stages(o->Br, o->Bc, o->d));
    else
        fprintf(f, "copies: %s\n",
                kernel == FA3_KERNEL_TMA
                    ? "by the tensor memory accelerator (cp.async.bulk.tensor.3d), one instruction per 64-feature "
                      "panel from one thread, completing on an mbarrier per K/V buffer"
                    : "16-byte cp.async by every thread, into two K/V buffers");
    if (fa3_kernel_persistent(kernel)) {
        const int blocks = dev && dev->present ? dev->sms : FA3_MODEL_SMS;
        fprintf(f, "work per block (K/V blocks, %d blocks%s): the most loaded over the mean %.3f with the items "
                   "handed out in order (steps 3-5), %.3f in a zigzag (step 6%s), %.3f from a queue (steps 7-8%s)\n",
                blocks, dev && dev->present ? "" : ", an H200's SMs", fa3_schedule_balance(o, blocks, FA3_ORDER_STRIDE),
                fa3_schedule_balance(o, blocks, FA3_ORDER_ZIGZAG), kernel == FA3_KERNEL_ZIGZAG ? ", this kernel" : "",
                fa3_schedule_balance(o, blocks, FA3_ORDER_QUEUE), fa3_kernel_claims(kernel) ? ", this kernel" : "");
        const int BH = o->B * o->H, Hs = fa3_section_heads(o->N, o->d, BH);
        if (fa3_kernel_claims(kernel) && o->causal)
            fprintf(f, "queue: the causal items in %lld section(s) of %d heads (K and V: %d x 4 N d = %s B, of at "
                       "most %lld MB, about half an H200's L2), the longest first inside each; the next item claimed "
                       "by the producer with an atomic increment\n",
                    (long long)ceil_div(BH, Hs), Hs, Hs, fmt_bytes(4LL * Hs * o->N * o->d, a, 32),
                    FA3_SECTION_BYTES >> 20);
        else if (fa3_kernel_claims(kernel))
            fprintf(f, "queue: the items in step 6's order (a head's tiles in turn), the next one claimed by the "
                       "producer with an atomic increment\n");
    }
    if (dev && dev->present) {
        KernelResources r;
        fa3_kernel_resources(kernel, o->d, o->Br, o->Bc, o->dtype, &r);
        resources_print(f, dev, &r, grid);
    }
}

static void shrink_for_cpu(Options *o) { attn_shrink_for_cpu(o, fa3_flops); }

/* The compute roof: wgmma's own measured ceiling (ceiling.cu; cached per GPU), beside the datasheet's dense fp16
 * tensor-core peak it is built for. */
static void roof(FILE *f, const Options *o, const DeviceInfo *dev, Ceilings *c) {
    const int datasheet = device_use_tensor_core_roof(dev, c); /* c->fp32_tflops: the datasheet's peak, if known */
    const double peak = c->fp32_tflops;
    c->fp32_tflops = device_chapter_ceiling(dev, "wgmma_tflops", "wgmma throughput (m64n128k16, fp16, every SM)",
                                            fa3_measure_wgmma_tflops);
    c->tensor_cores = 1;
    c->roof_what = "wgmma's measured ceiling";
    fprintf(f, "compute roof for this chapter: wgmma's measured ceiling, %.0f TFLOP/s (m64n128k16 from shared "
               "memory in every SM, ceiling.cu)", c->fp32_tflops);
    if (datasheet) fprintf(f, "; %.0f%% of the datasheet's dense fp16 tensor-core peak, %.0f", 100 * c->fp32_tflops / peak, peak);
    fprintf(f, "\n");
}

void fa3_default_tiles(int kernel, const Options *o, int *Br, int *Bc) {
    if (kernel == FA3_KERNEL_DISPATCH) /* step 2's tiles (and kernel) where it measured the faster (tiles.h) */
        kernel = o->d == 64 && o->N <= FA3_DISPATCH_SHORT ? FA3_KERNEL_TMA : FA3_KERNEL_TMA_STORE;
    if (fa3_kernel_persistent(kernel)) {
        *Br = o->d == 64 && !(o->causal && o->N <= FA3_WS_SHORT_CAUSAL) ? FA3_WS_BR_D64 : FA3_WS_BR;
        *Bc = FA3_WS_BC;
    } else {
        *Br = FA3_BR;
        *Bc = FA3_BC;
    }
}

const ChapterOption ch06_options[] = {
    [CH06_OPT_KERNEL] = {.name = "kernel",
                         .metavar = "K",
                         .values = fa3_kernel_options,
                         .default_index = FA3_KERNEL_DEFAULT,
                         .what = "a kernel of chapter 06",
                         .help = "wgmma | tma | warp_specialized | pingpong | overlap | zigzag | queue |\n"
                                 "tma_store | dispatch: the chapter's steps (default dispatch, the fastest\n"
                                 "measured); the chapter rejects any other name, listing these",
                         .tiles_for = fa3_default_tiles},
    {0}};

/* The kernels' arithmetic is chapter 05's (fp32 scores and statistics, P rounded to the storage type), so is the
 * rule; both kernels share it and the CPU version. */
#define FA3_TABLE(TILES, LAUNCH, LAUNCH_COUNTED)                                                              \
    {.tiles = TILES, .nkernels = 1, .timed = {LAUNCH}, .counted = {LAUNCH_COUNTED}, .tolerances = fa3_tolerances, \
     .forward_cpu = fa3_forward_cpu}
#define FA3_TILES(SMEM, FORMULA)                                                                                  \
    {.br_supported = fa3_br_supported, .bc_supported = fa3_bc_supported, .br_sizes = FA3_BR_SIZES,               \
     .bc_sizes = FA3_BC_SIZES, .smem_bytes = SMEM, .smem_formula = FORMULA}
#define FA3_PERSISTENT_TILES(SMEM, FORMULA)                                                                       \
    {.br_supported = fa3_ws_br_supported, .bc_supported = fa3_ws_bc_supported, .br_sizes = FA3_WS_BR_SIZES,      \
     .bc_sizes = FA3_WS_BC_SIZES, .smem_bytes = SMEM, .smem_formula = FORMULA}
#define FA3_WS_TILES FA3_PERSISTENT_TILES(fa3_ws_smem_bytes, FA3_WS_SMEM_FORMULA)
#define FA3_OV_TILES FA3_PERSISTENT_TILES(fa3_ov_smem_bytes, FA3_OV_SMEM_FORMULA)
#define FA3_QUEUE_TILES FA3_PERSISTENT_TILES(fa3_queue_smem_bytes, FA3_QUEUE_SMEM_FORMULA)
#define FA3_TS_TILES FA3_PERSISTENT_TILES(fa3_tma_store_smem_bytes, FA3_QUEUE_SMEM_FORMULA)
#define FA3_DISPATCH_TILES                                                                                        \
    {.br_supported = fa3_dispatch_br_supported, .bc_supported = fa3_ws_bc_supported,                              \
     .br_sizes = FA3_DISPATCH_BR_SIZES, .bc_sizes = FA3_WS_BC_SIZES, .smem_bytes = fa3_dispatch_smem_bytes,      \
     .smem_formula = FA3_DISPATCH_SMEM_FORMULA}

const AttnChapter fa3_kernels[FA3_KERNEL_COUNT] = {
    [FA3_KERNEL_WGMMA] = FA3_TABLE(FA3_TILES(fa3_smem_bytes, FA3_SMEM_FORMULA), flash_wgmma_launch,
                                   flash_wgmma_launch_counted),
    [FA3_KERNEL_TMA] = FA3_TABLE(FA3_TILES(fa3_tma_smem_bytes, FA3_TMA_SMEM_FORMULA), flash_tma_launch,
                                 flash_tma_launch_counted),
    [FA3_KERNEL_WARP_SPECIALIZED] = FA3_TABLE(FA3_WS_TILES, flash_warp_specialized_launch,
                                              flash_warp_specialized_launch_counted),
    [FA3_KERNEL_PINGPONG] = FA3_TABLE(FA3_WS_TILES, flash_pingpong_launch, flash_pingpong_launch_counted),
    [FA3_KERNEL_OVERLAP] = FA3_TABLE(FA3_OV_TILES, flash_overlap_launch, flash_overlap_launch_counted),
    [FA3_KERNEL_ZIGZAG] = FA3_TABLE(FA3_OV_TILES, flash_zigzag_launch, flash_zigzag_launch_counted),
    [FA3_KERNEL_QUEUE] = FA3_TABLE(FA3_QUEUE_TILES, flash_queue_launch, flash_queue_launch_counted),
    [FA3_KERNEL_TMA_STORE] = FA3_TABLE(FA3_TS_TILES, flash_tma_store_launch, flash_tma_store_launch_counted),
    [FA3_KERNEL_DISPATCH] = FA3_TABLE(FA3_DISPATCH_TILES, flash_dispatch_launch, flash_dispatch_launch_counted),
};

const Chapter chapter06 = {
    .id = "06",
    .title = "Hopper: FlashAttention with both products as wgmma (warpgroup MMA, sm_90a), then TMA copies, then "
             "warp specialization, then pingpong scheduling, overlap in the warpgroup and balanced work orders; "
             "fp16/bf16, fp32 accumulation",
    .features = CLI_TILES | CLI_CAUSAL | CLI_DTYPE,
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
