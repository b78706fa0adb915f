/* chapter.c: chapter 07 for the shared driver: the steps (--kernel), validation, the --model lines, and the table
 * of parts.
 *
 *   ./ch07/run [--kernel naive|flash] [--causal] [--br 32 --bc 32]   the article's problem size by default
 *   ./ch07/run --model [...]                                          the IO/FLOP model of the step's kernels */
#include <string.h>

#include "ch07.h"
#include "forward_tiles.h"
#include "kernels.h"
#include "tiles.h"

static const char *const STEP_NAMES[] = {[BWD_NAIVE] = "naive", [BWD_FLASH] = "flash", NULL};

const ChapterOption ch07_options[] = {
    [CH07_OPT_KERNEL] = {.name = "kernel",
                         .metavar = "K",
                         .values = STEP_NAMES,
                         .default_index = BWD_FLASH,
                         .what = "a step of chapter 07",
                         .help = "naive | flash: the backward through HBM (P, dP and dS materialized), or\n"
                                 "FlashAttention-2's (default flash)"},
    {0}};

int bwd_step(const Options *o) { return (int)option_value(o, ch07_options, CH07_OPT_KERNEL); }

/* The backward's tiles, for the common checks of d, Br, Bc and shared memory (attention_limits.h). */
static const AttnChapter flash_bwd_tiles = {
    .tiles = {.br_supported = bwd_br_supported, .bc_supported = bwd_bc_supported, .br_sizes = BWD_BR_SIZES,
              .bc_sizes = BWD_BC_SIZES, .smem_bytes = bwd_smem_bytes, .smem_formula = BWD_SMEM_FORMULA},
};

static int validate(const Options *o, const DeviceInfo *dev, char *msg, size_t len) {
    if (o->dtype != DTYPE_FP32) {
        snprintf(msg, len, "--dtype %s is not supported: chapter 07's steps are fp32", dtype_name(o->dtype));
        return 2;
    }
    if (attn_validate(&flash_bwd_tiles, o, dev, msg, len, "07")) return 2;
    if (attn_validate_heads_grid(o, msg, len)) return 2;
    return 0;
}

static void print_model_extra(FILE *f, const Options *o, const DeviceInfo *dev) {
    char a[32], b[32], c[32];
    const long long Tr = ceil_div(o->N, o->Br), Tc = ceil_div(o->N, o->Bc);
    fprintf(f, "forward: chapter 03's flash_v2 kernel at Br = %d, Bc = %d (a setup row: outside the backward's total)\n",
            FWD_BR, FWD_BC);
    fprintf(f, "FLOPs: the backward is five N x N x d products (S again, dV, dP, dQ, dK) to the forward's two: "
               "10 B H N^2 d = %s, 2.5 x the forward's %s%s\n",
            fmt_bytes(bwd_flops(o), a, 32), fmt_bytes(fwd_flops(o), b, 32), o->causal ? " (halved: causal)" : "");
    const IoBytes ideal = bwd_ideal_bytes(o);
    fprintf(f, "compulsory for the backward as a whole: Q, K, V, O, dO and L read once, %s B; dQ, dK, dV written once, "
               "%s B\n",
            fmt_bytes(ideal.read, a, 32), fmt_bytes(ideal.write, b, 32));
    if (bwd_step(o) == BWD_NAIVE) {
        const unsigned long long nn = (unsigned long long)o->B * o->H * o->N * o->N * sizeof(float);
        fprintf(f, "step 1 (naive): P, dP and dS in HBM, %s B each (B H N^2 floats); GEMMs of %d x %d tiles, inner "
                   "chunks of %d, %d threads\n",
                fmt_bytes(nn, a, 32), GEMM_TM, GEMM_TN, GEMM_TK, GEMM_THREADS);
        return;
    }
    fprintf(f, "step 2 (flash): grid (Tc, B*H) = (%lld, %d): %s blocks of %d threads, one per key block K_j, V_j; "
               "each sweeps up to Tr = %lld query blocks\n",
            Tc, o->B * o->H, fmt_bytes(flash_bwd_grid_blocks(o), a, 32), BWD_THREADS, Tr);
    fprintf(f, "query rows loaded per head: %s of Tc N = %s%s\n",
            fmt_bytes(flash_rows_loaded(o->N, o->Br, o->Bc, o->causal), b, 32),
            fmt_bytes((unsigned long long)Tc * o->N, c, 32),
            o->causal ? " (causal: a key block starts at the first query block that sees it)" : "");
    fprintf(f, "shared memory per block: %s B = %s\n", fmt_bytes(bwd_smem_bytes(o->Br, o->Bc, o->d), a, 32),
            BWD_SMEM_FORMULA);
    if (dev && dev->present) {
        KernelResources r;
        flash_bwd_resources(o->d, o->Br, o->Bc, &r);
        resources_print(f, dev, &r, flash_bwd_grid_blocks(o));
    }
}

/* A second or so of CPU time: B = 1, at most 4 heads, N halved (its remainder modulo the tiles kept) until the
 * backward's FLOPs are about those of the forward chapters' CPU run. */
static void shrink_for_cpu(Options *o) {
    const double cpu_run_flops = 1.2e9;
    if ((double)bwd_flops(o) <= cpu_run_flops) return;
    o->B = 1;
    if (o->H > 4) o->H = 4;
    const int N = o->N, tile = GEMM_TM; /* 64: a multiple of every tile of the chapter */
    for (long long target = N; (double)bwd_flops(o) > cpu_run_flops && target > 64; target /= 2)
        o->N = shrink_seq_keeping_tiles(N, target, tile);
}

const Chapter chapter07 = {
    .id = "07",
    .title = "the backward pass: dQ, dK, dV from recomputation (fp32)",
    .features = CLI_TILES | CLI_CAUSAL,
    .options = ch07_options,
    .default_br = BWD_DEFAULT_BR,
    .default_bc = BWD_DEFAULT_BC,
    .total_label = "backward",
    .validate = validate,
    .models = bwd_models,
    .print_model_extra = print_model_extra,
    .device_bytes = bwd_device_bytes,
    .host_bytes = bwd_host_bytes,
    .run_gpu = bwd_run_gpu,
    .run_cpu = bwd_run_cpu,
    .shrink_for_cpu = shrink_for_cpu,
    .save = SAVE_GRADIENTS,
};
