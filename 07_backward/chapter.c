/* chapter.c: chapter 07 for the shared driver: the steps (--kernel), validation, the --model lines, and the table
 * of parts.
 *
 *   ./ch07/run [--kernel naive|flash] [--causal] [--br 32 --bc 32]   the article's problem size by default, fp32
 *   ./ch07/run --kernel flash --dq pass ...                           step 2 with dQ in a kernel of its own
 *   ./ch07/run --kernel tensor_cores [--dtype fp16|bf16] [--causal]   step 3: fp16 (default) or bf16, Br = Bc = 64
 *   ./ch07/run --kernel dq_vectors ...                                step 4: dQ in strips, 16-byte atomics
 *   ./ch07/run --kernel wide_blocks ...                               step 5: Br = 64, Bc = 128, 8 warps
 *   ./ch07/run --kernel wgmma ...                                     step 6: step 5 on wgmma (sm_90 only)
 *   ./ch07/run --kernel lean_loop ...                                 step 7: step 6 issuing fewer instructions
 *   ./ch07/run --kernel dq_bulk ...                                   step 8: dQ added by the copy engine
 *   ./ch07/run --kernel dq_overlap ...                                step 9: dQ's product runs into the next visit
 *   ./ch07/run --kernel warp_specialized ...                          step 10: a producer warpgroup copies, adds dQ
 *   ./ch07/run --kernel warp_tiles ...                                step 11: step 5, each product on its warp tiling
 *   ./ch07/run --kernel lean_tiles ...                                step 12: step 11 issuing fewer instructions
 *   ./ch07/run --kernel kv_registers ...                              step 13: K_j, V_j's fragments in registers
 *   ./ch07/run --kernel dq_pairs ...                                  step 14: dQ added in pairs, no shuffle
 *   ./ch07/run --kernel dq_quads ...                                  step 15: dQ in fours, from a K_j interleaved
 *   ./ch07/run --kernel stat_copies ...                               step 16: L_i and D_i copied by cp.async
 *   ./ch07/run --kernel dq_squares ...                                step 17: dQ in squares of 32 x 32 a warp
 *   ./ch07/run --kernel matrix_stores ...                             step 18: P^T and dS^T stored by stmatrix
 *   ./ch07/run --model [...]                                          the IO/FLOP model of the step's kernels */
#include <string.h>

#include "ch07.h"
#include "forward_tiles.h"
#include "kernels.h"
#include "tiles.h"

static const char *const STEP_NAMES[] = {[BWD_NAIVE] = "naive", [BWD_FLASH] = "flash",
                                         [BWD_TC] = "tensor_cores", [BWD_VEC] = "dq_vectors",
                                         [BWD_WIDE] = "wide_blocks", [BWD_WGMMA] = "wgmma",
                                         [BWD_LEAN] = "lean_loop", [BWD_BULK] = "dq_bulk",
                                         [BWD_OVL] = "dq_overlap", [BWD_WS] = "warp_specialized",
                                         [BWD_TILE] = "warp_tiles", [BWD_TILE_LEAN] = "lean_tiles",
                                         [BWD_KV_REGS] = "kv_registers", [BWD_DQ_PAIRS] = "dq_pairs",
                                         [BWD_DQ_QUADS] = "dq_quads", [BWD_STAT_COPIES] = "stat_copies",
                                         [BWD_DQ_SQUARES] = "dq_squares", [BWD_MATRIX_STORES] = "matrix_stores",
                                         NULL};
static const char *const DQ_NAMES[] = {[DQ_ATOMIC] = "atomic", [DQ_PASS] = "pass", NULL};
/* Each step's tiles without --br, --bc (step 1's GEMM tiles are fixed; its Br, Bc are unused). A Br of 0: the step's
 * Br is d's, TC_KV_BR(d) (steps 13 on: bwd_default_tiles, and validate holds --br to it). */
static const int STEP_TILES[BWD_STEPS][2] = {[BWD_NAIVE] = {BWD_DEFAULT_BR, BWD_DEFAULT_BC},
                                             [BWD_FLASH] = {BWD_DEFAULT_BR, BWD_DEFAULT_BC},
                                             [BWD_TC] = {TC_BWD_BR, TC_BWD_BC},
                                             [BWD_VEC] = {TC_BWD_BR, TC_BWD_BC},
                                             [BWD_WIDE] = {TC_WIDE_BR, TC_WIDE_BC},
                                             [BWD_WGMMA] = {TC_WG_BR, TC_WG_BC},
                                             [BWD_LEAN] = {TC_WG_BR, TC_WG_BC},
                                             [BWD_BULK] = {TC_WG_BR, TC_WG_BC},
                                             [BWD_OVL] = {TC_WG_BR, TC_WG_BC},
                                             [BWD_WS] = {TC_WG_BR, TC_WG_BC},
                                             [BWD_TILE] = {TC_TILE_BR, TC_TILE_BC},
                                             [BWD_TILE_LEAN] = {TC_TILE_BR, TC_TILE_BC},
                                             [BWD_KV_REGS] = {0, TC_TILE_BC},
                                             [BWD_DQ_PAIRS] = {0, TC_TILE_BC},
                                             [BWD_DQ_QUADS] = {0, TC_TILE_BC},
                                             [BWD_STAT_COPIES] = {0, TC_TILE_BC},
                                             [BWD_DQ_SQUARES] = {0, TC_TILE_BC},
                                             [BWD_MATRIX_STORES] = {0, TC_TILE_BC}};
static void bwd_default_tiles(int step, const Options *o, int *Br, int *Bc) {
    *Br = STEP_TILES[step][0] ? STEP_TILES[step][0] : TC_KV_BR(o->d);
    *Bc = STEP_TILES[step][1];
}

const ChapterOption ch07_options[] = {
    [CH07_OPT_KERNEL] = {.name = "kernel",
                         .metavar = "K",
                         .values = STEP_NAMES,
                         .default_index = BWD_FLASH,
                         .what = "a step of chapter 07",
                         .help = "naive | flash | tensor_cores | dq_vectors | wide_blocks | wgmma |\n"
                                 "lean_loop | dq_bulk | dq_overlap | warp_specialized | warp_tiles |\n"
                                 "lean_tiles | kv_registers | dq_pairs | dq_quads | stat_copies | dq_squares |\n"
                                 "matrix_stores: the backward through HBM (P, dP and dS materialized),\n"
                                 "FlashAttention-2's in fp32, or on tensor cores in fp16/bf16: plain, dQ by\n"
                                 "16-byte atomics, 128-key blocks, Hopper's wgmma, its loop in fewer\n"
                                 "instructions, dQ by the copy engine, dQ's product overlapping the next visit,\n"
                                 "a producer warpgroup that copies and adds dQ (wgmma .. warp_specialized: sm_90\n"
                                 "only), then mma.sync again: a warp tiling per product, its loop in fewer\n"
                                 "instructions, K_j's and V_j's fragments held in registers at d = 64, dQ added\n"
                                 "in pairs without shuffles, then in fours from an interleaved copy of K_j, then\n"
                                 "L_i and D_i copied by cp.async, then dQ's product in squares of 32 x 32 a\n"
                                 "warp, then P^T and dS^T stored by stmatrix on sm_90 (default flash)",
                         .tiles_for = bwd_default_tiles},
    [CH07_OPT_DQ] = {.name = "dq",
                     .metavar = "HOW",
                     .values = DQ_NAMES,
                     .default_index = DQ_ATOMIC,
                     .what = "a way of step 2 to compute dQ",
                     .help = "atomic | pass: step 2 (flash) adds dQ_i's shares by fp32 atomics in its one\n"
                             "kernel, or computes dQ in a kernel of its own, one block per Q_i, without\n"
                             "atomics (dq_pass.cu; Br = Bc only; default atomic)",
                     .flags = OPTION_SHOWN_IF_CHANGED | OPTION_RECORDED},
    {0}};

int bwd_step(const Options *o) { return (int)option_value(o, ch07_options, CH07_OPT_KERNEL); }
int bwd_16bit(const Options *o) { return bwd_step(o) >= BWD_TC; }
int bwd_hopper(const Options *o) { return bwd_step_on_wgmma(bwd_step(o)); }
int bwd_dq_pass(const Options *o) { return option_value(o, ch07_options, CH07_OPT_DQ) == DQ_PASS; }

/* The backward's tiles, for the common checks of d, Br, Bc and shared memory (attention_limits.h). */
static const AttnChapter flash_bwd_tiles = {
    .tiles = {.br_supported = bwd_br_supported, .bc_supported = bwd_bc_supported, .br_sizes = BWD_BR_SIZES,
              .bc_sizes = BWD_BC_SIZES, .smem_bytes = bwd_smem_bytes, .smem_formula = BWD_SMEM_FORMULA},
};

/* Steps 3 on: 16-bit tiles, the same sizes in each (steps 3 and 4 at Br = Bc = 64, steps 5 on at Bc = 128). */
static size_t tc_bwd_smem_bytes16(int Br, int Bc, int d) { return tc_bwd_smem_bytes(Br, Bc, d, 2); }

static const AttnChapter tc_bwd_tiles = {
    .tiles = {.br_supported = tc_bwd_br_supported, .bc_supported = tc_bwd_bc_supported, .br_sizes = TC_BWD_BR_SIZES,
              .bc_sizes = TC_BWD_BC_SIZES, .smem_bytes = tc_bwd_smem_bytes16, .smem_formula = TC_BWD_SMEM_FORMULA},
};
static const AttnChapter tc_wide_tiles = {
    .tiles = {.br_supported = tc_wide_br_supported, .bc_supported = tc_wide_bc_supported,
              .br_sizes = TC_WIDE_BR_SIZES, .bc_sizes = TC_WIDE_BC_SIZES, .smem_bytes = tc_bwd_smem_bytes16,
              .smem_formula = TC_WIDE_SMEM_FORMULA},
};
static size_t tc_tile_smem_bytes16(int Br, int Bc, int d) { return tc_tile_smem_bytes(Br, Bc, d, 2); }
static const AttnChapter tc_tile_tiles = {
    .tiles = {.br_supported = tc_tile_br_supported, .bc_supported = tc_tile_bc_supported,
              .br_sizes = TC_TILE_BR_SIZES, .bc_sizes = TC_TILE_BC_SIZES, .smem_bytes = tc_tile_smem_bytes16,
              .smem_formula = TC_TILE_SMEM_FORMULA},
};
static int tc_kv_br_any(int Br) { return Br == TC_KV_BR(64) || Br == TC_KV_BR(128); } /* d's: validate */
static const AttnChapter tc_kv_tiles = {
    .tiles = {.br_supported = tc_kv_br_any, .bc_supported = tc_tile_bc_supported, .br_sizes = TC_KV_BR_SIZES,
              .bc_sizes = TC_TILE_BC_SIZES, .smem_bytes = tc_tile_smem_bytes16, .smem_formula = TC_KV_SMEM_FORMULA},
};
static size_t tc_quads_smem_bytes16(int Br, int Bc, int d) { return tc_quads_smem_bytes(Br, Bc, d, 2); }
static const AttnChapter tc_quads_tiles = {
    .tiles = {.br_supported = tc_kv_br_any, .bc_supported = tc_tile_bc_supported, .br_sizes = TC_KV_BR_SIZES,
              .bc_sizes = TC_TILE_BC_SIZES, .smem_bytes = tc_quads_smem_bytes16, .smem_formula = TC_QUADS_SMEM_FORMULA},
};
static const AttnChapter tc_wg_tiles = {
    .tiles = {.br_supported = tc_wg_br_supported, .bc_supported = tc_wg_bc_supported, .br_sizes = TC_WG_BR_SIZES,
              .bc_sizes = TC_WG_BC_SIZES, .smem_bytes = tc_bwd_smem_bytes16, .smem_formula = TC_WG_SMEM_FORMULA},
};
static size_t tc_bulk_smem_bytes16(int Br, int Bc, int d) { return tc_bulk_smem_bytes(Br, Bc, d, 2); }
static const AttnChapter tc_bulk_tiles = {
    .tiles = {.br_supported = tc_wg_br_supported, .bc_supported = tc_wg_bc_supported, .br_sizes = TC_WG_BR_SIZES,
              .bc_sizes = TC_WG_BC_SIZES, .smem_bytes = tc_bulk_smem_bytes16, .smem_formula = TC_BULK_SMEM_FORMULA},
};
static size_t tc_ovl_smem_bytes16(int Br, int Bc, int d) { return tc_ovl_smem_bytes(Br, Bc, d, 2); }
static const AttnChapter tc_ovl_tiles = {
    .tiles = {.br_supported = tc_wg_br_supported, .bc_supported = tc_wg_bc_supported, .br_sizes = TC_WG_BR_SIZES,
              .bc_sizes = TC_WG_BC_SIZES, .smem_bytes = tc_ovl_smem_bytes16, .smem_formula = TC_OVL_SMEM_FORMULA},
};
static size_t tc_ws_smem_bytes16(int Br, int Bc, int d) { return tc_ws_smem_bytes(Br, Bc, d, 2); }
static const AttnChapter tc_ws_tiles = {
    .tiles = {.br_supported = tc_wg_br_supported, .bc_supported = tc_wg_bc_supported, .br_sizes = TC_WG_BR_SIZES,
              .bc_sizes = TC_WG_BC_SIZES, .smem_bytes = tc_ws_smem_bytes16, .smem_formula = TC_WS_SMEM_FORMULA},
};

/* What print_model_extra and validate say of each step on tensor cores. */
typedef struct {
    const char *label;
    int threads;
    const AttnChapter *tiles;
    void (*resources)(int d, int dtype, KernelResources *r);
} TcStep;
static const TcStep TC_STEPS[BWD_STEPS] = {
    [BWD_TC] = {"3 (tensor_cores, mma.sync)", TC_BWD_THREADS, &tc_bwd_tiles, tc_bwd_resources},
    [BWD_VEC] = {"4 (dq_vectors: dQ by 16-byte atomics)", TC_BWD_THREADS, &tc_bwd_tiles, tc_vec_bwd_resources},
    [BWD_WIDE] = {"5 (wide_blocks: 128 keys, 8 warps)", TC_WIDE_THREADS, &tc_wide_tiles, tc_wide_bwd_resources},
    [BWD_WGMMA] = {"6 (wgmma: two warpgroups of 64 keys)", TC_WG_THREADS, &tc_wg_tiles, tc_wgmma_bwd_resources},
    [BWD_LEAN] = {"7 (lean_loop: step 6 issuing fewer instructions)", TC_WG_THREADS, &tc_wg_tiles,
                  tc_lean_bwd_resources},
    [BWD_BULK] = {"8 (dq_bulk: dQ_i added by the copy engine)", TC_WG_THREADS, &tc_bulk_tiles, tc_bulk_bwd_resources},
    [BWD_OVL] = {"9 (dq_overlap: dQ_i's product runs into the next visit)", TC_WG_THREADS, &tc_ovl_tiles,
                 tc_ovl_bwd_resources},
    [BWD_WS] = {"10 (warp_specialized: a producer warpgroup copies and adds dQ)", TC_WS_THREADS, &tc_ws_tiles,
                tc_ws_bwd_resources},
    [BWD_TILE] = {"11 (warp_tiles: a warp tiling per product, mma.sync)", TC_TILE_THREADS, &tc_tile_tiles,
                  tc_tile_bwd_resources},
    [BWD_TILE_LEAN] = {"12 (lean_tiles: step 11 issuing fewer instructions)", TC_TILE_THREADS, &tc_tile_tiles,
                       tc_tile_lean_bwd_resources},
    [BWD_KV_REGS] = {"13 (kv_registers: K_j's and V_j's fragments in registers at d = 64)", TC_TILE_THREADS,
                     &tc_kv_tiles, tc_kvreg_bwd_resources},
    [BWD_DQ_PAIRS] = {"14 (dq_pairs: dQ_i added in pairs, straight from the fragments)", TC_TILE_THREADS, &tc_kv_tiles,
                      tc_pairs_bwd_resources},
    [BWD_DQ_QUADS] = {"15 (dq_quads: dQ_i added in fours, from an interleaved copy of K_j)", TC_TILE_THREADS,
                      &tc_quads_tiles, tc_quads_bwd_resources},
    [BWD_STAT_COPIES] = {"16 (stat_copies: L_i and D_i copied by cp.async, as Q_i and dO_i)", TC_TILE_THREADS,
                         &tc_quads_tiles, tc_stats_bwd_resources},
    [BWD_DQ_SQUARES] = {"17 (dq_squares: dQ_i's product in squares of 32 x 32, one a warp)", TC_TILE_THREADS,
                        &tc_quads_tiles, tc_squares_bwd_resources},
    [BWD_MATRIX_STORES] = {"18 (matrix_stores: P_ij^T and dS_ij^T stored by stmatrix on sm_90)", TC_TILE_THREADS,
                           &tc_quads_tiles, tc_stores_bwd_resources},
};

/* The storage type without --dtype: fp16 for the steps on tensor cores, fp32 for the others. */
static DType step_dtype(const Options *o) { return bwd_16bit(o) ? DTYPE_FP16 : DTYPE_FP32; }

static int validate(const Options *o, const DeviceInfo *dev, char *msg, size_t len) {
    const char *step = STEP_NAMES[bwd_step(o)];
    if (bwd_dq_pass(o) && bwd_step(o) != BWD_FLASH) {
        snprintf(msg, len, "--dq pass is not supported by --kernel %s: only step 2 (--kernel flash) has a dQ pass; "
                           "the other steps add dQ by atomics", step);
        return 2;
    }
    if (bwd_dq_pass(o) && o->Br != o->Bc) {
        snprintf(msg, len, "--dq pass runs at square tiles, Br = Bc = 32 or 64 (the program's default and the bench's), "
                           "not --br %d --bc %d", o->Br, o->Bc);
        return 2;
    }
    if (!bwd_16bit(o)) {
        if (o->dtype != DTYPE_FP32) {
            snprintf(msg, len, "--dtype %s is not supported by --kernel %s: steps naive and flash are fp32 (fp16 and "
                               "bf16: --kernel tensor_cores, dq_vectors, wide_blocks, wgmma, lean_loop, dq_bulk, dq_overlap, "
                               "warp_specialized, warp_tiles, lean_tiles, kv_registers, dq_pairs, dq_quads, stat_copies, "
                               "dq_squares, matrix_stores)",
                     dtype_name(o->dtype), step);
            return 2;
        }
        if (attn_validate(&flash_bwd_tiles, o, dev, msg, len, "07")) return 2;
        return attn_validate_heads_grid(o, msg, len);
    }
    if (o->dtype != DTYPE_FP16 && o->dtype != DTYPE_BF16) {
        snprintf(msg, len, "--dtype %s is not supported by --kernel %s: it stores fp16 or bf16 (fp32: "
                           "--kernel flash)", dtype_name(o->dtype), step);
        return 2;
    }
    if (!tc_bwd_dim_supported(o->d)) {
        snprintf(msg, len, "--dim %d is not supported by --kernel %s: it has kernels for d = 64 and 128", o->d,
                 step);
        return 2;
    }
    if (STEP_TILES[bwd_step(o)][0] == 0 && !tc_kv_br_supported(o->Br, o->d)) {
        snprintf(msg, len, "--br %d is not supported by --kernel %s at d = %d: its Br is %d (128 at d = 64, 64 at "
                           "d = 128)", o->Br, step, o->d, TC_KV_BR(o->d));
        return 2;
    }
    if (attn_validate(TC_STEPS[bwd_step(o)].tiles, o, dev, msg, len, "07")) return 2;
    if (attn_validate_heads_grid(o, msg, len)) return 2;
    if (dev && dev->present) {
        const int cc = 10 * dev->cc_major + dev->cc_minor;
        if (bwd_hopper(o) && cc != 90) {
            snprintf(msg, len, "%s is sm_%d: --kernel %s needs an sm_90 GPU (Hopper: wgmma is sm_90a's alone)",
                     dev->name, cc, step);
            return 2;
        }
        if (cc < 75) {
            snprintf(msg, len, "%s is sm_%d: --kernel %s needs sm_75 or later (mma.sync, ldmatrix)", dev->name,
                     cc, step);
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
    const int tc = bwd_16bit(o);
    const TcStep *ts = &TC_STEPS[bwd_step(o)];
    if (bwd_dq_pass(o)) {
        fprintf(f, "step 2 (flash), --dq pass: flash_dq on grid (Tr, B*H) = (%lld, %d), one block per Q_i, %d threads, "
                   "sweeping up to Tc = %lld key blocks; then flash_dkdv, below\n",
                Tr, o->B * o->H, BWD_THREADS, Tc);
        fprintf(f, "key rows loaded per head by flash_dq: %s of Tr N = %s; shared memory per block of it: %s B = "
                   "(2 Bc (d + 4) + 2 Br (d + 4) + Br (Bc + 8) + 2 Br) floats\n",
                fmt_bytes(attn_keys_loaded(o->N, o->Br, o->Bc, o->causal), a, 32),
                fmt_bytes((unsigned long long)Tr * o->N, b, 32), fmt_bytes(dq_smem_bytes(o->Br, o->Bc, o->d), c, 32));
        if (dev && dev->present) {
            KernelResources r;
            flash_dq_resources(o->d, o->Br, o->Bc, &r);
            resources_print(f, dev, &r, Tr * o->B * o->H);
        }
    }
    fprintf(f, "step %s: grid (Tc, B*H) = (%lld, %d): %s blocks of %d threads, one per key block K_j, V_j; "
               "each sweeps up to Tr = %lld query blocks\n",
            tc ? ts->label : bwd_dq_pass(o) ? "2 (flash), flash_dkdv" : "2 (flash)", Tc, o->B * o->H,
            fmt_bytes(flash_bwd_grid_blocks(o), a, 32), tc ? ts->threads : BWD_THREADS, Tr);
    if (tc)
        fprintf(f, "storage: Q, K, V, O, dO, dK, dV in %s (2 bytes); L, D and dQ in fp32 (dQ: fp32 %s)\n",
                dtype_name(o->dtype), bwd_step(o) >= BWD_BULK && bwd_step(o) <= BWD_WS
                                                              ? "adds by the copy engine's bulk reductions"
                                                              : "atomic adds");
    fprintf(f, "query rows loaded per head: %s of Tc N = %s%s\n",
            fmt_bytes(flash_rows_loaded(o->N, o->Br, o->Bc, o->causal), b, 32),
            fmt_bytes((unsigned long long)Tc * o->N, c, 32),
            o->causal ? " (causal: a key block starts at the first query block that sees it)" : "");
    fprintf(f, "shared memory per block: %s B = %s\n",
            fmt_bytes(tc ? ts->tiles->tiles.smem_bytes(o->Br, o->Bc, o->d) : bwd_smem_bytes(o->Br, o->Bc, o->d), a, 32),
            tc ? ts->tiles->tiles.smem_formula : BWD_SMEM_FORMULA);
    if (dev && dev->present) {
        KernelResources r;
        if (tc) ts->resources(o->d, o->dtype, &r);
        else if (bwd_dq_pass(o)) flash_dkdv_resources(o->d, o->Br, o->Bc, &r);
        else flash_bwd_resources(o->d, o->Br, o->Bc, &r);
        resources_print(f, dev, &r, flash_bwd_grid_blocks(o));
    }
}

/* The compute roof follows the step: the driver's FP32 FFMA peak for steps 1 and 2, the tensor cores' for steps 3
 * on (chapter 05's roof: the datasheet's dense fp16 peak, beside the measured mma.sync ceiling, which is the roof of
 * steps 6 to 10 no more: wgmma reaches past it). */
static void roof(FILE *f, const Options *o, const DeviceInfo *dev, Ceilings *c) {
    if (bwd_hopper(o)) {
        if (device_use_tensor_core_roof(dev, c))
            fprintf(f, "compute roof: the datasheet's dense fp16 tensor-core peak, %.0f TFLOP/s (wgmma, steps 6 "
                       "to 10, is the instruction that reaches it)\n", c->fp32_tflops);
    } else if (bwd_16bit(o)) {
        device_use_mma_roof(f, dev, c);
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
    .title = "the backward pass: dQ, dK, dV from recomputation (fp32; fp16/bf16 on tensor cores)",
    .features = CLI_TILES | CLI_CAUSAL | CLI_DTYPE,
    .options = ch07_options,
    .default_br = BWD_DEFAULT_BR,
    .default_bc = BWD_DEFAULT_BC,
    .dtype_for = step_dtype,
    .total_label = "backward",
    .roof = roof,
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
