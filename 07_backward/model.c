/* model.c: the closed forms of model.h. */
#include "model.h"

#include "attention.h"
#include "checked_math.h"
#include "forward_tiles.h"
#include "tiles.h"

typedef unsigned long long u64;

/* Every count below is in checked_math.h's checked arithmetic: exact, or the flag is raised (the size is rejected).
 * Per-head counts (N^2 ceil(d / TN), N d Tc) fit in 64 bits on their own (N, d < 2^31). */
static u64 heads(const Options *o) { return count_mul((u64)o->B, (u64)o->H); }
static IoBytes per_head(const Options *o, u64 read, u64 write) {
    return io_bytes(count_mul(heads(o), read), count_mul(heads(o), write));
}

IoBytes fwd_model_bytes(const Options *o) {
    const u64 f = sizeof(float), N = o->N, d = o->d;
    const u64 keys = attn_keys_loaded(o->N, FWD_BR, FWD_BC, o->causal);
    return per_head(o, f * d * (N + 2 * keys), f * N * (d + 1));
}

/* A GEMM of M x Nc outputs, inner length Kin, in GEMM_TM x GEMM_TN tiles: each tile loads its A and B panels. */
static u64 gemm_reads(u64 M, u64 Nc, u64 Kin) {
    return Kin * (M * (u64)ceil_div((long long)Nc, GEMM_TN) + Nc * (u64)ceil_div((long long)M, GEMM_TM));
}

IoBytes naive_model_bytes(const Options *o, int kernel) {
    const u64 e = sizeof(float), N = o->N, d = o->d, tN = (u64)ceil_div(o->N, GEMM_TN);
    switch (kernel) {
    case NAIVE_P: return per_head(o, e * gemm_reads(N, N, d) + sizeof(float) * N * tN, e * N * N);
    case NAIVE_DV: /* fall through: dV = P^T dO, dQ = dS K, dK = dS^T Q are all N x d from an inner N */
    case NAIVE_DQ:
    case NAIVE_DK: return per_head(o, e * gemm_reads(N, d, N), e * N * d);
    case NAIVE_DP: return per_head(o, e * gemm_reads(N, N, d), e * N * N);
    default: return per_head(o, e * N * (2 * d + 2 * N), e * N * N); /* NAIVE_DS */
    }
}

unsigned long long flash_rows_loaded(int N, int Br, int Bc, int causal) {
    const long long Tc = ceil_div(N, Bc);
    if (!causal) return (u64)Tc * (u64)N;
    u64 rows = 0;
    for (long long j = 0; j < Tc; j++) rows += (u64)(N - (long long)Br * (j * Bc / Br));
    return rows;
}

IoBytes flash_model_bytes(const Options *o, int kernel) {
    const u64 e = dtype_size(o->dtype), N = o->N, d = o->d;
    if (kernel == FLASH_D) return per_head(o, 2 * e * N * d, sizeof(float) * N * (1 + d));
    const u64 rows = flash_rows_loaded(o->N, o->Br, o->Bc, o->causal);
    return per_head(o, count_add(2 * e * N * d, count_mul(2 * e * d + 2 * sizeof(float), rows)),
                    count_add(2 * e * N * d, count_mul(sizeof(float) * d, rows)));
}

IoBytes dq_pass_model_bytes(const Options *o, int kernel) {
    const u64 e = sizeof(float), N = o->N, d = o->d;
    if (kernel == PASS_DQ) {
        const u64 keys = attn_keys_loaded(o->N, o->Br, o->Bc, o->causal);
        return per_head(o, count_add(3 * e * N * d + sizeof(float) * N, count_mul(2 * e * d, keys)),
                        sizeof(float) * N * (1 + d));
    }
    IoBytes b = flash_model_bytes(o, FLASH_MAIN); /* flash_dkdv is flash_bwd without dQ: its reads, no atomics */
    b.write = per_head(o, 0, 2 * e * N * d).write;
    return b;
}

/* dK and dV in the storage type, dQ in fp32 (step 3's output; fp32 in steps 1 and 2 as well, where e = 4). */
IoBytes bwd_ideal_bytes(const Options *o) {
    const u64 e = dtype_size(o->dtype), N = o->N, d = o->d;
    return per_head(o, 5 * e * N * d + sizeof(float) * N, 2 * e * N * d + sizeof(float) * N * d);
}

/* Each kernel's own compulsory traffic: what it reads and writes, once. */
static IoBytes naive_ideal_bytes(const Options *o, int kernel) {
    const u64 e = sizeof(float), N = o->N, d = o->d;
    switch (kernel) {
    case NAIVE_P: return per_head(o, 2 * e * N * d + sizeof(float) * N, e * N * N);
    case NAIVE_DV:
    case NAIVE_DQ:
    case NAIVE_DK: return per_head(o, e * (N * N + N * d), e * N * d);
    case NAIVE_DP: return per_head(o, 2 * e * N * d, e * N * N);
    default: return per_head(o, e * N * (2 * d + 2 * N), e * N * N);
    }
}

static IoBytes flash_ideal_bytes(const Options *o, int kernel) {
    const u64 e = dtype_size(o->dtype), N = o->N, d = o->d;
    if (kernel == FLASH_D) return per_head(o, 2 * e * N * d, sizeof(float) * N * (1 + d));
    /* Q K V dO, L D; dK dV, dQ (fp32) */
    return per_head(o, 4 * e * N * d + 2 * sizeof(float) * N, 2 * e * N * d + sizeof(float) * N * d);
}

/* --dq pass: flash_dq reads Q, K, V, dO, O, L and writes D and dQ; flash_dkdv reads Q, K, V, dO, L, D and writes dK,
 * dV. */
static IoBytes dq_pass_ideal_bytes(const Options *o, int kernel) {
    const u64 e = sizeof(float), N = o->N, d = o->d;
    if (kernel == PASS_DQ) return per_head(o, 5 * e * N * d + sizeof(float) * N, sizeof(float) * N * (1 + d));
    IoBytes b = flash_ideal_bytes(o, FLASH_MAIN); /* flash_bwd's, less dQ */
    b.write = per_head(o, 0, 2 * e * N * d).write;
    return b;
}

/* Causal: exactly half (a count that fits although the full one would not is exact). */
u64 bwd_flops(const Options *o) { return count_mul4(o->causal ? 5 : 10, heads(o), (u64)o->N * o->N, (u64)o->d); }
u64 fwd_flops(const Options *o) { return count_mul4(o->causal ? 2 : 4, heads(o), (u64)o->N * o->N, (u64)o->d); }

static u64 scores(const Options *o) {
    const u64 N = o->N;
    return count_mul(heads(o), o->causal ? N * (N + 1) / 2 : N * N);
}
u64 bwd_softmax_ops(const Options *o) { return count_mul(5, scores(o)); }

long long flash_bwd_grid_blocks(const Options *o) { return ceil_div(o->N, o->Bc) * o->B * o->H; }

static const char *const NAIVE_NAMES[NAIVE_KERNELS] = {"naive_p", "naive_dv", "naive_dp",
                                                       "naive_ds", "naive_dq", "naive_dk"};
static const char *const FLASH_NAMES[FLASH_KERNELS] = {"flash_bwd_d", "flash_bwd"};
static const char *const PASS_NAMES[FLASH_KERNELS] = {"flash_dq", "flash_dkdv"};
/* steps 3 to 18: step 3's tc_bwd_d, then each step's main kernel */
static const char *const TC_NAMES[BWD_STEPS][FLASH_KERNELS] = {[BWD_TC] = {"tc_bwd_d", "tc_bwd"},
                                                                 [BWD_VEC] = {"tc_bwd_d", "tc_vec_bwd"},
                                                                 [BWD_WIDE] = {"tc_bwd_d", "tc_wide_bwd"},
                                                                 [BWD_WGMMA] = {"tc_bwd_d", "tc_wgmma_bwd"},
                                                                 [BWD_LEAN] = {"tc_bwd_d", "tc_lean_bwd"},
                                                                 [BWD_BULK] = {"tc_bwd_d", "tc_bulk_bwd"},
                                                                 [BWD_OVL] = {"tc_bwd_d", "tc_ovl_bwd"},
                                                                 [BWD_WS] = {"tc_bwd_d", "tc_ws_bwd"},
                                                                 [BWD_TILE] = {"tc_bwd_d", "tc_tile_bwd"},
                                                                 [BWD_TILE_LEAN] = {"tc_bwd_d", "tc_tile_lean_bwd"},
                                                                 [BWD_KV_REGS] = {"tc_bwd_d", "tc_kvreg_bwd"},
                                                                 [BWD_DQ_PAIRS] = {"tc_bwd_d", "tc_pairs_bwd"},
                                                                 [BWD_DQ_QUADS] = {"tc_bwd_d", "tc_quads_bwd"},
                                                                 [BWD_STAT_COPIES] = {"tc_bwd_d", "tc_stats_bwd"},
                                                                 [BWD_DQ_SQUARES] = {"tc_bwd_d", "tc_squares_bwd"},
                                                                 [BWD_MATRIX_STORES] = {"tc_bwd_d", "tc_stores_bwd"}};

int bwd_models(const Options *o, KernelModel *m) {
    const u64 N = o->N, d = o->d, gemm = count_mul4(o->causal ? 1 : 2, heads(o), N * N, d);
    const IoBytes fwd_ideal = per_head(o, 3 * sizeof(float) * N * d, sizeof(float) * N * (d + 1));
    KernelModel fwd = {"forward", fwd_flops(o), count_mul(5, scores(o)), fwd_model_bytes(o), fwd_ideal, 1};
    m[0] = fwd;
    if (bwd_step(o) == BWD_NAIVE) {
        for (int k = 0; k < NAIVE_KERNELS; k++) {
            /* five GEMMs of 2 N^2 d each (naive_ds: none); the score-wise work: exp(S - L) in naive_p, P (dP - D)
             * in naive_ds, the dot products D_i beside it */
            const u64 ops = k == NAIVE_P ? count_mul(3, scores(o))
                            : k == NAIVE_DS ? count_add(count_mul(2, scores(o)), count_mul3(2, heads(o), N * d))
                                            : 0;
            KernelModel x = {NAIVE_NAMES[k], k == NAIVE_DS ? 0 : gemm, ops, naive_model_bytes(o, k),
                             naive_ideal_bytes(o, k), 0};
            m[1 + k] = x;
        }
        return 1 + NAIVE_KERNELS;
    }
    if (bwd_dq_pass(o)) {
        /* The book's FLOPs, 10 B H N^2 d in all, where each product's result is made: dQ = dS K in flash_dq, S, dV,
         * dP and dK in flash_dkdv (flash_dq's S and dP again are not counted: recomputation). The score-wise work is
         * done in both (P and dS in each), and D's dot products in flash_dq. */
        const u64 dq_flops = count_mul4(o->causal ? 1 : 2, heads(o), N * N, d);
        const u64 dq_ops = count_add(bwd_softmax_ops(o), count_mul3(2, heads(o), N * d));
        KernelModel dq = {PASS_NAMES[PASS_DQ], dq_flops, dq_ops, dq_pass_model_bytes(o, PASS_DQ),
                          dq_pass_ideal_bytes(o, PASS_DQ), 0};
        KernelModel kv = {PASS_NAMES[PASS_DKDV], bwd_flops(o) - dq_flops, bwd_softmax_ops(o),
                          dq_pass_model_bytes(o, PASS_DKDV), dq_pass_ideal_bytes(o, PASS_DKDV), 0};
        m[1] = dq, m[2] = kv;
        return 1 + FLASH_KERNELS;
    }
    const char *const *names = bwd_16bit(o) ? TC_NAMES[bwd_step(o)] : FLASH_NAMES;
    KernelModel dk = {names[FLASH_D], 0, count_mul3(2, heads(o), N * d), flash_model_bytes(o, FLASH_D),
                      flash_ideal_bytes(o, FLASH_D), 0};
    KernelModel bwd = {names[FLASH_MAIN], bwd_flops(o), bwd_softmax_ops(o), flash_model_bytes(o, FLASH_MAIN),
                        flash_ideal_bytes(o, FLASH_MAIN), 0};
    m[1] = dk, m[2] = bwd;
    return 1 + FLASH_KERNELS;
}
