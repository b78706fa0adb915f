/* chapter.c: chapter 04 for the shared driver: validation, the --model lines (with the bank-conflict model),
 * and one attention table per layout: paired runs kernels.cu's kernel, the others variants.cu's.
 *
 *   ./ch04/run [--layout paired] [--causal] [--br 32 --bc 32]   the article's configuration by default
 *   ./ch04/run --model [--layout ...]       the IO/FLOP model, shared memory, predicted bank conflicts */
#include "banks.h"
#include "ch04.h"
#include "checked_math.h"
#include "kernels.h"
#include "layouts.h"
#include "tiles.h"

/* AttnTiles.smem_bytes takes no layout: one function per layout. */
#define SMEM_OF(L, name) \
    static size_t name(int Br, int Bc, int d) { return smem_bytes_layout(Br, Bc, d, L); }
SMEM_OF(LAYOUT_NAIVE, smem_naive)
SMEM_OF(LAYOUT_TRANSPOSED, smem_transposed)
SMEM_OF(LAYOUT_PADDED, smem_padded)
SMEM_OF(LAYOUT_SWIZZLED, smem_swizzled)
#undef SMEM_OF

static int validate(const Options *o, const DeviceInfo *dev, char *msg, size_t len) {
    if (attn_validate(&flash_v4[layout_of(o)], o, dev, msg, len, "04")) return 2;
    if (attn_validate_heads_grid(o, msg, len)) return 2;
    return 0;
}

static void print_model_extra(FILE *f, const Options *o, const DeviceInfo *dev) {
    char a[32], b[32], c[32];
    const int layout = layout_of(o), Br = o->Br, Bc = o->Bc, dim = o->d;
    const long long blocks = flash_v4_grid_blocks(o);
    const size_t fl = sizeof(float);
    fprintf(f, "layout %s; grid (Tr, B*H) = (%lld, %d): %s blocks of %d threads, one per query block\n",
            layout_name(layout), ceil_div(o->N, Br), o->B * o->H, fmt_bytes(blocks, a, 32), threads_per_block(Br));
    fprintf(f, "shared memory per block: %s B, of which K_j %s B (%s)\n",
            fmt_bytes(smem_bytes_layout(Br, Bc, dim, layout), a, 32),
            fmt_bytes(fl * k_tile_floats(layout, Bc, dim), b, 32),
            layout == LAYOUT_PADDED ? "Bc x (d + 4)" : layout == LAYOUT_TRANSPOSED ? "d x Bc" : "Bc x d");
    if (layout == LAYOUT_TRANSPOSED)
        fprintf(f, "K^T in HBM: %s B (rows of %d floats: N rounded up to 4), written once by k_transpose\n",
                fmt_bytes(fl * (size_t)o->B * o->H * dim * attn_kt_stride(o->N), c, 32), attn_kt_stride(o->N));
    banks_print(f, o);
    if (dev && dev->present) {
        KernelResources r;
        if (layout == LAYOUT_PAIRED)
            flash_v4_resources(dim, Br, Bc, &r);
        else
            flash_v4_variant_resources(dim, Br, Bc, layout, &r);
        resources_print(f, dev, &r, blocks);
    }
}

static void shrink_for_cpu(Options *o) { attn_shrink_for_cpu(o, flash_v4_flops); }

/* K^T: d rows of attn_kt_stride(N) floats per head. */
static unsigned long long kt_elements(int B, int H, int N, int d) {
    return count_mul4((unsigned long long)B, (unsigned long long)H, (unsigned long long)d,
                      (unsigned long long)attn_kt_stride(N));
}

#define TILES(smem)                                                                                          \
    {.br_supported = br_supported, .bc_supported = bc_supported, .br_sizes = BR_SIZES, .bc_sizes = BC_SIZES, \
     .smem_bytes = smem, .smem_formula = SMEM_FORMULA}
#define ONE_KERNEL(L, smem, launch)                                                                        \
    [L] = {.tiles = TILES(smem), .nkernels = 1, .timed = {launch}, .counted = {launch##_counted},             \
           .forward_cpu = flash_v4_forward_cpu}

const AttnChapter flash_v4[LAYOUT_COUNT] = {
    ONE_KERNEL(LAYOUT_NAIVE, smem_naive, flash_v4_naive_launch), /* variants.cu */
    [LAYOUT_TRANSPOSED] = {.tiles = TILES(smem_transposed),
                           .nkernels = 2,
                           .timed = {k_transpose_launch, flash_v4_transposed_launch},
                           .counted = {k_transpose_launch_counted, flash_v4_transposed_launch_counted},
                           .extra = {[FV4_BUF_KT] = {"K^T", kt_elements, DTYPE_FP32, 0}},
                           .nextra = 1,
                           .forward_cpu = flash_v4_forward_cpu},
    ONE_KERNEL(LAYOUT_PADDED, smem_padded, flash_v4_padded_launch),
    ONE_KERNEL(LAYOUT_SWIZZLED, smem_swizzled, flash_v4_swizzled_launch),
    ONE_KERNEL(LAYOUT_PAIRED, smem_bytes, flash_v4_launch), /* kernels.cu */
};

const ChapterOption ch04_options[] = {
    [CH04_OPT_LAYOUT] = {.name = "layout",
                         .metavar = "L",
                         .values = layout_names,
                         .default_index = LAYOUT_PAIRED,
                         .what = "a layout of chapter 04",
                         .help = "naive | transposed | padded | swizzled | paired: how K_j sits in shared\n"
                                 "memory and is read (default paired, the fastest)",
                         .flags = OPTION_RECORDED},
    {0}};

const Chapter chapter04 = {
    .id = "04",
    .title = "bank conflicts: K_j laid out so that S_ij = Q_i K_j^T reads it conflict-free (fp32)",
    .features = CLI_TILES | CLI_CAUSAL,
    .options = ch04_options,
    .validate = validate,
    .models = flash_v4_models,
    .print_model_extra = print_model_extra,
    .attention = flash_v4,
    .attention_by = "layout",
    .shrink_for_cpu = shrink_for_cpu,
};
