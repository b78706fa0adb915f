/* chapter.c: chapter 00 for the shared driver: validation, the --model lines (grids, article 2's count of
 * the three kernels' bytes, the intensity of each step, the A100 example, the size of S; ids as in ARTICLES.md), and the table of parts. */
#include <string.h>

#include "ch00.h"
#include "checked_math.h"
#include "tiles.h"

typedef unsigned long long u64;

/* Largest N whose softmax row fits in `smem` bytes of shared memory per block. */
static long long softmax_max_N(int smem) {
    long long N = ((long long)smem / (long long)sizeof(float) - SOFTMAX_SCRATCH_FLOATS) / 4 * 4;
    return N > 0 ? N : 0;
}

static int validate(const Options *o, const DeviceInfo *dev, char *msg, size_t len) {
    char a[32], b[32];
    if (!head_dim_supported(o->d)) {
        snprintf(msg, len, "--dim %d is not supported: chapter 00 has kernels for d = 32, 64 and 128", o->d);
        return 2;
    }
    if (o->dtype == DTYPE_BF16) {
        snprintf(msg, len, "--dtype bf16 is not supported: chapter 00 stores fp32 or fp16 (bf16 is chapter 05's)");
        return 2;
    }
    if ((long long)o->B * o->H > 65535) {
        snprintf(msg, len,
                 "--batch %d --heads %d: the grids put the B*H = %lld heads in their y dimension, which holds at most "
                 "65535",
                 o->B, o->H, (long long)o->B * o->H);
        return 2;
    }
    if (!dev || !dev->present) return 0;

    /* A problem that does not fit in device memory at all is stopped next by the driver's memory check, which
     * names the bytes needed and free; the limits below concern problems that would fit. */
    if (std_attn_device_bytes(o) > device_free_bytes()) return 0;
    const size_t row = softmax_smem_bytes(o->N);
    if (row > (size_t)dev->smem_per_block_optin) {
        snprintf(msg, len,
                 "--seq %d: the softmax kernel keeps a whole row of S on chip, N x 4 B + %d B = %s B of shared memory "
                 "per block, more than the %s B per block that %s allows; on this GPU standard attention's row-wise "
                 "softmax stops at N = %lld (chapter 01's online softmax removes the limit)",
                 o->N, (int)(SOFTMAX_SCRATCH_FLOATS * sizeof(float)), fmt_bytes(row, a, sizeof(a)),
                 fmt_bytes((u64)dev->smem_per_block_optin, b, sizeof(b)), dev->name,
                 softmax_max_N(dev->smem_per_block_optin));
        return 2;
    }
    if (gemm_of(o) == GEMM_OWN) {
        const size_t qk = qk_smem_bytes(o->d), pv = pv_smem_bytes(o->d), need = qk > pv ? qk : pv;
        if (need > (size_t)dev->smem_per_block_optin) {
            snprintf(msg, len,
                     "--dim %d: the GEMM kernels need %s B of shared memory per block (qk_gemm: Q_i %d x %d floats "
                     "and two K chunks), more than the %s B per block that %s allows; use --gemm cublas or a smaller "
                     "--dim",
                     o->d, fmt_bytes(need, a, sizeof(a)), QK_BR, o->d,
                     fmt_bytes((u64)dev->smem_per_block_optin, b, sizeof(b)), dev->name);
            return 2;
        }
    }
    return 0;
}

static void print_grids(FILE *f, const Options *o, const DeviceInfo *dev) {
    char a[32], b[32], c[32];
    const long long heads = (long long)o->B * o->H, Tq = qk_blocks_per_head(o), Tp = pv_blocks_per_head(o);
    const int own = gemm_of(o) == GEMM_OWN;
    if (own)
        fprintf(f, "qk_gemm  grid (Tq, B*H) = (%lld, %lld): %s blocks of %d threads; each loads Q_i (%d x d) once and "
                   "sweeps all of K in %d x %d chunks, so K is read Tq = %lld times; %s B of shared memory\n",
                Tq, heads, fmt_bytes((u64)(Tq * heads), a, 32), SA_THREADS, QK_BR, QK_BC, QK_BK, Tq,
                fmt_bytes(qk_smem_bytes(o->d), b, 32));
    if (softmax_row_per_warp(o->N)) {
        const long long Ts = softmax_blocks_per_head(o->N);
        fprintf(f, "softmax  rows of N <= %d: grid (ceil(N / %d), B*H) = (%lld, %lld): %s blocks of %d threads, one row "
                   "per warp, kept in the warp's registers (N / 32 <= %d floats per lane); no shared memory, no "
                   "barrier\n",
                SOFTMAX_WARP_MAX_N, SOFTMAX_WARP_ROWS, Ts, heads, fmt_bytes((u64)(Ts * heads), a, 32),
                softmax_threads(o->N), SOFTMAX_WARP_MAX_N / 32);
    } else {
        fprintf(f, "softmax  rows of N > %d: grid (N, B*H) = (%d, %lld): %s blocks of %d threads, one row each, kept "
                   "on chip: %s B of shared memory (N x 4 B + %d B)\n",
                SOFTMAX_WARP_MAX_N, o->N, heads, fmt_bytes((u64)o->N * heads, a, 32), softmax_threads(o->N),
                fmt_bytes(softmax_smem_bytes(o->N), b, 32), (int)(SOFTMAX_SCRATCH_FLOATS * sizeof(float)));
    }
    if (own)
        fprintf(f, "pv_gemm  grid (Tp, B*H) = (%lld, %lld): %s blocks of %d threads; each keeps O_i (%d x d) in "
                   "registers and streams P_i and V in chunks of %d keys, so V is read Tp = %lld times; %s B of shared "
                   "memory\n",
                Tp, heads, fmt_bytes((u64)(Tp * heads), a, 32), SA_THREADS, PV_BR(o->d), PV_BC(o->d), Tp,
                fmt_bytes(pv_smem_bytes(o->d), c, 32));
    else
        fprintf(f, "qk_cublas, pv_cublas: cuBLAS picks its own tiles, which this program cannot see: their model "
                   "column is the compulsory traffic and they have no counted bytes\n");
    if (dev && dev->present) {
        fprintf(f, "on this GPU (%s):", dev->name);
        for (int k = 0; k < SA_KERNELS; k++) {
            if (!own && k != SA_SOFTMAX) continue;
            KernelResources r;
            std_attn_resources(k, o->d, o->dtype == DTYPE_FP16, o->N, &r);
            fprintf(f, " %s %d regs, %d B spilled, %d blocks/SM;", k == SA_QK ? "qk_gemm" : k == SA_PV ? "pv_gemm" : "softmax",
                    r.regs, r.local_bytes, r.blocks_per_sm);
        }
        fprintf(f, " a softmax row fits up to N = %lld\n", softmax_max_N(dev->smem_per_block_optin));
    }
}

/* IO-3kernels: article 2's count, and where it parts from the compulsory bytes. */
static void print_article_count(FILE *f, const Options *o) {
    char a[32], b[32], c[32], d[32];
    const u64 s1 = io3kernels_bytes(o, SA_QK), s2 = io3kernels_bytes(o, SA_SOFTMAX), s3 = io3kernels_bytes(o, SA_PV);
    const u64 ours3 = io_total(pv_ideal_bytes(o));
    const u64 compulsory = count_add(count_add(io_total(qk_ideal_bytes(o)), io_total(softmax_ideal_bytes(o))), ours3);
    fprintf(f, "article 2's count (IO-3kernels in ARTICLES.md), in bytes of %zu-byte elements over B*H = %lld heads (per head in fp16: 4Nd + 2N^2, "
               "4N^2, 4N^2 + 4Nd):\n",
            dtype_size(o->dtype), (long long)o->B * o->H);
    fprintf(f, "  S = QK^T %s   P = softmax(S) %s   O = PV %s   total %s (8Nd + 10N^2 per head in fp16)\n",
            fmt_bytes(s1, a, 32), fmt_bytes(s2, b, 32), fmt_bytes(s3, c, 32), fmt_bytes(count_add(count_add(s1, s2), s3), d, 32));
    fprintf(f, "  O = PV reads P once and V once and writes O once: %s, not %s; the article's step 3 counts P twice "
               "(%s B more), so the compulsory total is %s (8Nd + 8N^2 per head in fp16)\n",
            fmt_bytes(ours3, a, 32), fmt_bytes(s3, b, 32), fmt_bytes(s3 - ours3, c, 32), fmt_bytes(compulsory, d, 32));
}

/* IO-intensity: FLOPs per compulsory byte of each step, and the ridge points they are compared with. */
static void print_intensity(FILE *f, const Options *o) {
    const double e = (double)dtype_size(o->dtype);
    const double qk = (double)gemm_flops(o) / (double)io_total(qk_ideal_bytes(o));
    const double sm = (double)softmax_ops(o) / (double)io_total(softmax_ideal_bytes(o));
    const double pv = (double)gemm_flops(o) / (double)io_total(pv_ideal_bytes(o));
    fprintf(f, "intensity (IO-intensity), FLOP per compulsory byte at this size (limit for N >> d): S = QK^T %.1f (2d/e = %.0f), "
               "softmax %.2f (5 ops / 2e bytes; the article's ~1), O = PV %.1f (2d/e = %.0f)\n",
            qk, 2.0 * o->d / e, sm, pv, 2.0 * o->d / e);
    const DatasheetRow *a100 = datasheet_find("A100"), *h200 = datasheet_find("H200");
    if (a100 && h200)
        fprintf(f, "  ridge points (datasheet FLOP/s / HBM B/s): A100 fp16 tensor %.0f, H200 fp16 tensor %.0f, "
                   "H200 fp32 %.1f: above a ridge a step is compute-bound, below it memory-bound\n",
                a100->fp16_tc_tflops * 1e3 / a100->hbm_gbs, h200->fp16_tc_tflops * 1e3 / h200->hbm_gbs,
                h200->fp32_tflops * 1e3 / h200->hbm_gbs);
}

/* IO-example and IO-scores: article 2's worked example and the size of S. */
static void print_examples(FILE *f, const Options *o) {
    char a[32], b[32], c[32];
    Options x = *o;
    x.B = x.H = 1;
    x.N = 4096;
    x.d = 128;
    x.dtype = DTYPE_FP16;
    const u64 counted = io3kernels_bytes(&x, SA_QK) + io3kernels_bytes(&x, SA_SOFTMAX) + io3kernels_bytes(&x, SA_PV);
    const u64 compulsory = io_total(qk_ideal_bytes(&x)) + io_total(softmax_ideal_bytes(&x)) + io_total(pv_ideal_bytes(&x));
    const double flops = 2.0 * gemm_flops(&x);
    const DatasheetRow *a100 = datasheet_find("A100");
    if (a100) {
        const double bw = a100->hbm_gbs * 1e9, peak = a100->fp16_tc_tflops * 1e12;
        fprintf(f, "IO-example: N = 4096, d = 128, one head, fp16, on an A100 (datasheet %.0f GB/s, %.0f TFLOP/s fp16): memory "
                   "%s B -> %.4f ms (compulsory %s B -> %.4f ms) vs compute %s FLOP -> %.4f ms: %.1fx (%.1fx)\n",
                a100->hbm_gbs, a100->fp16_tc_tflops, fmt_bytes(counted, a, 32), counted / bw * 1e3,
                fmt_bytes(compulsory, b, 32), compulsory / bw * 1e3, fmt_bytes((u64)flops, c, 32), flops / peak * 1e3,
                counted / bw / (flops / peak), compulsory / bw / (flops / peak));
    }
    const u64 S8192 = 2ull * 8192 * 8192;
    const u64 S_here = count_mul4(dtype_size(o->dtype), (u64)o->B, (u64)o->H, (u64)o->N * o->N);
    fprintf(f, "IO-scores: S alone at N = 8192 in fp16 is %s B = %llu MiB per head, %s B = %llu GiB for 32 heads; here S and "
               "P take %s B each\n",
            fmt_bytes(S8192, a, 32), S8192 >> 20, fmt_bytes(32 * S8192, b, 32), (32 * S8192) >> 30,
            fmt_bytes(S_here, c, 32));
}

static void print_model_extra(FILE *f, const Options *o, const DeviceInfo *dev) {
    print_grids(f, o, dev);
    print_article_count(f, o);
    print_intensity(f, o);
    print_examples(f, o);
}

/* A second or so of CPU time: one batch of 2 heads, N at most 256 or so, keeping N's remainder modulo the
 * GEMMs' row tiles (QK_BR and PV_BR(d), powers of two: the larger is their lcm), so that a ragged N stays
 * ragged. */
static void shrink_for_cpu(Options *o) {
    if (o->B > 1) o->B = 1;
    if (o->H > 2) o->H = 2;
    const int tile = QK_BR > PV_BR(o->d) ? QK_BR : PV_BR(o->d);
    o->N = shrink_seq_keeping_tiles(o->N, 256, tile);
}

static const char *const GEMM_NAMES[] = {[GEMM_OWN] = "own", [GEMM_CUBLAS] = "cublas", NULL};

const ChapterOption ch00_options[] = {
    [CH00_OPT_GEMM] = {.name = "gemm",
                       .metavar = "G",
                       .values = GEMM_NAMES,
                       .default_index = GEMM_OWN,
                       .what = "a GEMM backend of chapter 00",
                       .help = "own | cublas: who computes the two matrix products (default own)",
                       .column = "gemm",
                       .flags = OPTION_SHOWN_IF_CHANGED},
    {0}};

const Chapter chapter00 = {
    .id = "00",
    .title = "standard attention: S = QK^T, P = softmax(S), O = PV, three kernels through HBM",
    .features = CLI_DTYPE,
    .options = ch00_options,
    .total_label = "total",
    .validate = validate,
    .models = std_attn_models,
    .print_model_extra = print_model_extra,
    .device_bytes = std_attn_device_bytes,
    .host_bytes = std_attn_host_bytes,
    .run_gpu = std_attn_run_gpu,
    .run_cpu = std_attn_run_cpu,
    .shrink_for_cpu = shrink_for_cpu,
    .save = SAVE_STANDARD,
};
