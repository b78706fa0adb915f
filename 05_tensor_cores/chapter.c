/* chapter.c: chapter 05 for the shared driver: validation (the kernel, tiles, d, storage types, the GPU's
 * architecture), the --model lines, and one attention table per kernel.
 *
 *   ./ch05/run [--kernel wmma|mma_staged|repack|o_registers|swizzle|mma_plain|unrolled_copy|edge_masks|mma|cp_async|
 *                        mma_async] [--dtype fp16|bf16] [--causal] [--br 64|128]
 *              the article's problem size by default; each kernel's own tiles without --br (Br = 128 is for
 *              mma_async only), Bc = 64 */
#include <string.h>

#include "ch05.h"
#include "kernels.h"
#include "tiles.h"
#include "wmma_tiles.h"

const AttnChapter *flash_tc_for(const Options *o) { return &flash_tc_kernels[tc_kernel_of(o)]; }

static int validate(const Options *o, const DeviceInfo *dev, char *msg, size_t len) {
    const int kernel = tc_kernel_of(o);
    if (kernel == TC_KERNEL_WMMA && (!wmma_br_supported(o->Br) || !wmma_bc_supported(o->Bc))) {
        snprintf(msg, len, "--kernel wmma has one tile, Br = Bc = 64: --br %d --bc %d is not supported (Br = 128 is "
                           "for --kernel mma_async)", o->Br, o->Bc);
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
    if (attn_validate_heads_grid(o, msg, len)) return 2;
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

void flash_tc_resources(int kernel, int d, int Br, int dtype, KernelResources *r) {
    switch (kernel) {
    case TC_KERNEL_WMMA: flash_wmma_resources(d, Br, TC_BC, dtype, r); break;
    case TC_KERNEL_MMA_STAGED: flash_mma_staged_resources(d, Br, TC_BC, dtype, r); break;
    case TC_KERNEL_REPACK: flash_repack_resources(d, Br, TC_BC, dtype, r); break;
    case TC_KERNEL_O_REGISTERS: flash_o_registers_resources(d, Br, TC_BC, dtype, r); break;
    case TC_KERNEL_SWIZZLE: flash_swizzle_resources(d, Br, dtype, r); break;
    case TC_KERNEL_MMA_PLAIN: flash_mma_plain_resources(d, Br, dtype, r); break;
    case TC_KERNEL_UNROLLED_COPY: flash_unrolled_copy_resources(d, Br, dtype, r); break;
    case TC_KERNEL_EDGE_MASKS: flash_edge_masks_resources(d, Br, dtype, r); break;
    case TC_KERNEL_MMA: flash_mma_resources(d, Br, dtype, r); break;
    case TC_KERNEL_CP_ASYNC: flash_cp_async_resources(d, Br, dtype, r); break;
    default: flash_mma_async_resources(d, Br, dtype, r); break;
    }
}

static void print_model_extra(FILE *f, const Options *o, const DeviceInfo *dev) {
    char a[32], b[32];
    const int kernel = tc_kernel_of(o), wmma = kernel == TC_KERNEL_WMMA;
    const int threads = wmma ? WMMA_THREADS : tc_threads();
    const int rows = wmma ? WMMA_ROWS_PER_WARP : tc_rows_per_warp(o->Br);
    fprintf(f, "kernel %s (--kernel %s); grid (Tr, B*H) = (%lld, %d): %s blocks of %d threads (%d warps of %d query "
               "rows); K/V blocks of %d keys\n",
            tc_kernel_name(kernel), tc_kernel_option(kernel), ceil_div(o->N, o->Br), o->B * o->H,
            fmt_bytes(flash_tc_grid_blocks(o), a, 32), threads, threads / 32, rows, o->Bc);
    fprintf(f, "shared memory per block: %s B (%s); %s storage, fp32 accumulation and statistics\n",
            fmt_bytes(flash_tc_for(o)->tiles.smem_bytes(o->Br, o->Bc, o->d), b, 32), flash_tc_for(o)->tiles.smem_formula,
            dtype_name(o->dtype));
    if (wmma)
        fprintf(f, "tiles: Br = %d, Bc = %d only; S_ij = Q_i K_j^T and O_i += P_ij V_j as 16x16x16 wmma fragments, "
                   "S_ij and P_ij through shared memory\n", WMMA_BR, WMMA_BC);
    else if (kernel == TC_KERNEL_MMA_ASYNC)
        fprintf(f, "Q_i's A fragments %s\n", MMA_ASYNC_Q_REGS(o->d, o->Br)
                                                 ? "in registers for the whole sweep"
                                                 : "re-read by ldmatrix for every K/V block (registers: S and O)");
    if (kernel >= TC_KERNEL_O_REGISTERS) { /* steps 2, 3: S_ij, P_ij or O_i through shared memory too, not modelled */
        const TcSharedLoads sl = flash_tc_shared_loads(o, kernel);
        char c[32], e[32], w[32];
        fprintf(f, "shared loads (model, N a multiple of Br): %s ldmatrix.x4 + %s 16-byte reads of O_i, 4 wavefronts "
                   "each (%s rows: no bank conflicts): %s wavefronts\n",
                fmt_bytes(sl.ldmatrix, c, 32), fmt_bytes(sl.other, e, 32),
                kernel >= TC_KERNEL_SWIZZLE ? "swizzled" : "padded", fmt_bytes(sl.wavefronts, w, 32));
    }
    if (dev && dev->present) {
        const int cc = 10 * dev->cc_major + dev->cc_minor;
        fprintf(f, "tensor-core path for sm_%d: %s\n", cc,
                wmma                              ? "nvcuda::wmma 16x16x16 (fp16 and, from sm_80, bf16), plain 16-byte loads"
                : cc < 80                         ? "mma.sync.m16n8k8 (two per k16), ldmatrix, plain loads (fp16 only; "
                                                    "no cp.async before sm_80)"
                : tc_kv_buffers(kernel) == 2    ? "mma.sync.m16n8k16, ldmatrix, cp.async double buffering"
                                                : "mma.sync.m16n8k16, ldmatrix, plain loads into one buffer");
        KernelResources r;
        flash_tc_resources(kernel, o->d, o->Br, o->dtype, &r);
        resources_print(f, dev, &r, flash_tc_grid_blocks(o));
    }
}

static void shrink_for_cpu(Options *o) { attn_shrink_for_cpu(o, flash_tc_flops); }

/* The compute roof of a tensor-core kernel: the datasheet's dense fp16 peak, and the measured ceiling of the
 * instruction these kernels use (device.h). */
static void roof(FILE *f, const Options *o, const DeviceInfo *dev, Ceilings *c) { device_use_mma_roof(f, dev, c); }

/* Without --br, --bc: the kernel's own tiles (steps 1-10: 64 x 64; mma_async: 128 x 64). */
static const int KERNEL_TILES[TC_KERNEL_COUNT][2] = {
    [TC_KERNEL_WMMA] = {WMMA_BR, TC_BC},         [TC_KERNEL_MMA_STAGED] = {WMMA_BR, TC_BC},
    [TC_KERNEL_REPACK] = {WMMA_BR, TC_BC},       [TC_KERNEL_O_REGISTERS] = {WMMA_BR, TC_BC},
    [TC_KERNEL_SWIZZLE] = {MMA_BR, TC_BC},       [TC_KERNEL_MMA_PLAIN] = {MMA_BR, TC_BC},
    [TC_KERNEL_UNROLLED_COPY] = {MMA_BR, TC_BC}, [TC_KERNEL_EDGE_MASKS] = {MMA_BR, TC_BC},
    [TC_KERNEL_MMA] = {MMA_BR, TC_BC},           [TC_KERNEL_CP_ASYNC] = {MMA_BR, TC_BC},
    [TC_KERNEL_MMA_ASYNC] = {MMA_ASYNC_BR, TC_BC}};

const ChapterOption ch05_options[] = {
    [CH05_OPT_KERNEL] = {.name = "kernel",
                         .metavar = "K",
                         .values = tc_kernel_options,
                         .default_index = TC_KERNEL_DEFAULT,
                         .what = "a kernel of chapter 05",
                         .help = "wmma | mma_staged | repack | o_registers | swizzle | mma_plain | unrolled_copy |\n"
                                 "edge_masks | mma | cp_async | mma_async: the chapter's eleven steps (default\n"
                                 "mma_async, the fastest); the chapter rejects any other name, listing these",
                         .tiles = KERNEL_TILES},
    {0}};

/* The chapter's kernels do the same arithmetic (fp32 scores and statistics, P rounded to the storage type), so they
 * share the CPU version and the rule. */
#define TC_TABLE(K, BR_SUPPORTED, BR_SIZES, SMEM, FORMULA, LAUNCH, LAUNCH_COUNTED)                           \
    [K] = {.tiles = {.br_supported = BR_SUPPORTED, .bc_supported = tc_bc_supported, .br_sizes = BR_SIZES,    \
                     .bc_sizes = TC_BC_SIZES, .smem_bytes = SMEM, .smem_formula = FORMULA},                   \
           .nkernels = 1, .timed = {LAUNCH}, .counted = {LAUNCH_COUNTED}, .tolerances = flash_tc_tolerances,  \
           .forward_cpu = flash_tc_forward_cpu}

const AttnChapter flash_tc_kernels[TC_KERNEL_COUNT] = {
    TC_TABLE(TC_KERNEL_WMMA, wmma_br_supported, WMMA_BR_SIZES, wmma_smem_bytes, WMMA_SMEM_FORMULA, flash_wmma_launch,
             flash_wmma_launch_counted),
    TC_TABLE(TC_KERNEL_MMA_STAGED, wmma_br_supported, WMMA_BR_SIZES, wmma_smem_bytes, WMMA_SMEM_FORMULA,
             flash_mma_staged_launch, flash_mma_staged_launch_counted),
    TC_TABLE(TC_KERNEL_REPACK, wmma_br_supported, WMMA_BR_SIZES, repack_smem_bytes, REPACK_SMEM_FORMULA,
             flash_repack_launch, flash_repack_launch_counted),
    TC_TABLE(TC_KERNEL_O_REGISTERS, wmma_br_supported, WMMA_BR_SIZES, o_registers_smem_bytes, O_REGISTERS_SMEM_FORMULA,
             flash_o_registers_launch, flash_o_registers_launch_counted),
    TC_TABLE(TC_KERNEL_SWIZZLE, mma_br_supported, MMA_BR_SIZES, mma_smem_bytes, MMA_SMEM_FORMULA, flash_swizzle_launch,
             flash_swizzle_launch_counted),
    TC_TABLE(TC_KERNEL_MMA_PLAIN, mma_br_supported, MMA_BR_SIZES, mma_smem_bytes, MMA_SMEM_FORMULA,
             flash_mma_plain_launch, flash_mma_plain_launch_counted),
    TC_TABLE(TC_KERNEL_UNROLLED_COPY, mma_br_supported, MMA_BR_SIZES, mma_smem_bytes, MMA_SMEM_FORMULA,
             flash_unrolled_copy_launch, flash_unrolled_copy_launch_counted),
    TC_TABLE(TC_KERNEL_EDGE_MASKS, mma_br_supported, MMA_BR_SIZES, mma_smem_bytes, MMA_SMEM_FORMULA,
             flash_edge_masks_launch, flash_edge_masks_launch_counted),
    TC_TABLE(TC_KERNEL_MMA, mma_br_supported, MMA_BR_SIZES, mma_smem_bytes, MMA_SMEM_FORMULA, flash_mma_launch,
             flash_mma_launch_counted),
    TC_TABLE(TC_KERNEL_CP_ASYNC, mma_br_supported, MMA_BR_SIZES, cp_async_smem_bytes, MMA_ASYNC_SMEM_FORMULA,
             flash_cp_async_launch, flash_cp_async_launch_counted),
    TC_TABLE(TC_KERNEL_MMA_ASYNC, mma_async_br_supported, MMA_ASYNC_BR_SIZES, mma_async_smem_bytes,
             MMA_ASYNC_SMEM_FORMULA, flash_mma_async_launch, flash_mma_async_launch_counted),
};

const Chapter chapter05 = {
    .id = "05",
    .title = "tensor cores: FlashAttention-2 with wmma, then mma.sync, in fp16/bf16, fp32 accumulation",
    .features = CLI_TILES | CLI_CAUSAL | CLI_DTYPE,
    .options = ch05_options,
    .default_dtype = DTYPE_FP16,
    .roof = roof,
    .validate = validate,
    .models = flash_tc_models,
    .print_model_extra = print_model_extra,
    .attention = flash_tc_kernels,
    .attention_by = "kernel",
    .shrink_for_cpu = shrink_for_cpu,
};
