/* cpu.c: chapter 07's backward steps on host arrays that stand in for HBM (ch07.h). Bytes are counted where the
 * kernels load and store, and only the real rows of a ragged tile move, as in the kernels; the arithmetic is
 * theirs, in fp32 (step 3: in its storage type, fp32 sums): scores in log2 units, exp2, sums in the kernels' order. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ch07.h"
#include "fma_loops.h"
#include "host_tensor.h"
#include "tiles.h"

static int min_int(int a, int b) { return a < b ? a : b; }

/* ---- step 1: six kernels through HBM --------------------------------------------------------------------------- */

/* Element (r, c) of a matrix operand at base[r rs + c cs]: a row-major matrix (rs = its columns, cs = 1) or the
 * transpose of one (rs = 1, cs = its columns). */
typedef struct {
    const float *base;
    size_t rs, cs;
} Operand;

enum { EPI_P, EPI_PLAIN, EPI_SCALED }; /* what a GEMM does with its sums: exp(scale s - L), nothing, times scale */

typedef struct {
    int epilogue;
    float scale;        /* 1 / sqrt(d)                                      */
    const float *L;     /* EPI_P: the rows' L (natural log)                 */
    int causal;         /* EPI_P: 0 where column (key) > row (query)        */
} Epilogue;

/* C (M x Nc) = A (M x Kin) B (Kin x Nc), tile by tile as tiles.h says: each GEMM_TM x GEMM_TN tile of C loads its A
 * panel (its real rows, every inner index) and its B panel (its real columns, every inner index) once. */
static void gemm_tiles(int M, int Nc, int Kin, Operand A, Operand B, float *C, const Epilogue *ep, IoBytes *io) {
    float *A_p = host_alloc(sizeof(float) * GEMM_TM * Kin, "an A panel");
    float *B_p = host_alloc(sizeof(float) * GEMM_TN * Kin, "a B panel");
    float *L_p = host_alloc(sizeof(float) * GEMM_TM, "L of a panel");
    for (int r0 = 0; r0 < M; r0 += GEMM_TM)
        for (int c0 = 0; c0 < Nc; c0 += GEMM_TN) {
            const int rows = min_int(GEMM_TM, M - r0), cols = min_int(GEMM_TN, Nc - c0);
            for (int r = 0; r < rows; r++)
                for (int x = 0; x < Kin; x++) A_p[(size_t)r * Kin + x] = A.base[(r0 + r) * A.rs + x * A.cs];
            for (int c = 0; c < cols; c++)
                for (int x = 0; x < Kin; x++) B_p[(size_t)c * Kin + x] = B.base[x * B.rs + (c0 + c) * B.cs];
            io->read += sizeof(float) * ((size_t)rows + cols) * Kin;
            if (ep->epilogue == EPI_P) counted_copy(L_p, ep->L + r0, (size_t)rows, &io->read);
            for (int r = 0; r < rows; r++)
                for (int c = 0; c < cols; c++) {
                    float acc = 0.f;
                    for (int x = 0; x < Kin; x++) acc = fmaf(A_p[(size_t)r * Kin + x], B_p[(size_t)c * Kin + x], acc);
                    float *out = &C[(size_t)(r0 + r) * Nc + c0 + c];
                    if (ep->epilogue == EPI_P)
                        *out = ep->causal && c0 + c > r0 + r ? 0.f
                                                             : exp2f(acc * (ep->scale * LOG2E) - L_p[r] * LOG2E);
                    else
                        *out = ep->epilogue == EPI_SCALED ? acc * ep->scale : acc;
                }
            io->write += sizeof(float) * (size_t)rows * cols;
        }
    free(A_p), free(B_p), free(L_p);
}

/* dS = P o (dP - D), D_i = dO_i . O_i, one row at a time (naive_ds). */
static void ds_rows(const float *P, const float *dP, const float *dO, const float *O, float *dS, int N, int d,
                    IoBytes *io) {
    float *row_a = host_alloc(sizeof(float) * (size_t)(N > d ? N : d), "a row");
    float *row_b = host_alloc(sizeof(float) * (size_t)(N > d ? N : d), "a row");
    for (int i = 0; i < N; i++) {
        counted_copy(row_a, dO + (size_t)i * d, (size_t)d, &io->read);
        counted_copy(row_b, O + (size_t)i * d, (size_t)d, &io->read);
        float D = 0.f;
        for (int x = 0; x < d; x++) D = fmaf(row_a[x], row_b[x], D);
        counted_copy(row_a, P + (size_t)i * N, (size_t)N, &io->read);
        counted_copy(row_b, dP + (size_t)i * N, (size_t)N, &io->read);
        for (int j = 0; j < N; j++) row_a[j] *= row_b[j] - D;
        counted_copy(dS + (size_t)i * N, row_a, (size_t)N, &io->write);
    }
    free(row_a), free(row_b);
}

void naive_backward_cpu(const Options *o, BwdHost *t, IoBytes *io, double *ms) {
    const int N = o->N, d = o->d;
    const size_t NN = (size_t)N * N;
    float *P = host_alloc(sizeof(float) * NN, "P"), *dP = host_alloc(sizeof(float) * NN, "dP");
    float *dS = host_alloc(sizeof(float) * NN, "dS");
    const float scale = 1.f / sqrtf((float)d);
    for (size_t h = 0; h < (size_t)o->B * o->H; h++) {
        const size_t at = h * N * d;
        const float *Q = t->Q + at, *K = t->K + at, *V = t->V + at, *O = t->O + at, *dO = t->dO + at;
        const Operand rows_Nd = {NULL, (size_t)d, 1}, cols_Nd = {NULL, 1, (size_t)d}; /* an N x d matrix, its transpose */
        const Operand rows_NN = {NULL, (size_t)N, 1}, cols_NN = {NULL, 1, (size_t)N};
        Operand a, b;
        const Epilogue e_p = {EPI_P, scale, t->L + h * N, o->causal}, e_plain = {EPI_PLAIN, scale, NULL, 0},
                       e_scaled = {EPI_SCALED, scale, NULL, 0};
        double t0 = wall_ms();
        a = rows_Nd, a.base = Q, b = cols_Nd, b.base = K; /* P = exp(scale Q K^T - L) */
        gemm_tiles(N, N, d, a, b, P, &e_p, &io[NAIVE_P]);
        double t1 = wall_ms();
        ms[NAIVE_P] += t1 - t0;
        a = cols_NN, a.base = P, b = rows_Nd, b.base = dO; /* dV = P^T dO */
        gemm_tiles(N, d, N, a, b, t->dV + at, &e_plain, &io[NAIVE_DV]);
        t0 = wall_ms();
        ms[NAIVE_DV] += t0 - t1;
        a = rows_Nd, a.base = dO, b = cols_Nd, b.base = V; /* dP = dO V^T */
        gemm_tiles(N, N, d, a, b, dP, &e_plain, &io[NAIVE_DP]);
        t1 = wall_ms();
        ms[NAIVE_DP] += t1 - t0;
        ds_rows(P, dP, dO, O, dS, N, d, &io[NAIVE_DS]);
        t0 = wall_ms();
        ms[NAIVE_DS] += t0 - t1;
        a = rows_NN, a.base = dS, b = rows_Nd, b.base = K; /* dQ = scale dS K */
        gemm_tiles(N, d, N, a, b, t->dQ + at, &e_scaled, &io[NAIVE_DQ]);
        t1 = wall_ms();
        ms[NAIVE_DQ] += t1 - t0;
        a = cols_NN, a.base = dS, b = rows_Nd, b.base = Q; /* dK = scale dS^T Q */
        gemm_tiles(N, d, N, a, b, t->dK + at, &e_scaled, &io[NAIVE_DK]);
        ms[NAIVE_DK] += wall_ms() - t1;
    }
    free(P), free(dP), free(dS);
}

/* ---- step 2: FlashAttention-2's backward ------------------------------------------------------------------------ */

/* flash_bwd_d: D_i = dO_i . O_i for every row, and dQ set to 0 for flash_bwd to add into. */
static void flash_d_cpu(const float *dO, const float *O, float *D, float *dQ, size_t rows, int d, IoBytes *io) {
    float *a = host_alloc(sizeof(float) * d, "dO_i"), *b = host_alloc(sizeof(float) * d, "O_i");
    float *zero = host_alloc(sizeof(float) * d, "a row of zeros");
    memset(zero, 0, sizeof(float) * d);
    for (size_t i = 0; i < rows; i++) {
        counted_copy(a, dO + i * d, (size_t)d, &io->read);
        counted_copy(b, O + i * d, (size_t)d, &io->read);
        float acc = 0.f;
        for (int x = 0; x < d; x++) acc = fmaf(a[x], b[x], acc);
        counted_copy(D + i, &acc, 1, &io->write);
        counted_copy(dQ + i * d, zero, (size_t)d, &io->write);
    }
    free(a), free(b), free(zero);
}

/* flash_bwd, one head: a block per key block j; the query blocks from the first that holds a row >= j Bc (the
 * mask) or from the first (none). dq_atomic = 0: --dq pass's flash_dkdv, the same without dQ. */
static void flash_head_cpu(const float *Q, const float *K, const float *V, const float *dO, const float *L,
                           const float *D, float *dQ, float *dK, float *dV, int N, int d, int Br, int Bc, int causal,
                           int dq_atomic, IoBytes *io) {
    const float scale = 1.f / sqrtf((float)d), scale_log2 = scale * LOG2E;
    float *K_j = host_alloc(sizeof(float) * Bc * d, "K_j"), *V_j = host_alloc(sizeof(float) * Bc * d, "V_j");
    float *dK_j = host_alloc(sizeof(float) * Bc * d, "dK_j"), *dV_j = host_alloc(sizeof(float) * Bc * d, "dV_j");
    float *Q_i = host_alloc(sizeof(float) * Br * d, "Q_i"), *dO_i = host_alloc(sizeof(float) * Br * d, "dO_i");
    float *dQ_i = host_alloc(sizeof(float) * Br * d, "dQ_i's share");
    float *dK_ij = host_alloc(sizeof(float) * Bc * d, "dK_j's share"), *dV_ij = host_alloc(sizeof(float) * Bc * d,
                                                                                         "dV_j's share");
    float *L_i = host_alloc(sizeof(float) * Br, "L_i"), *D_i = host_alloc(sizeof(float) * Br, "D_i");
    float *P = host_alloc(sizeof(float) * Br * Bc, "P_ij"), *dS = host_alloc(sizeof(float) * Br * Bc, "dS_ij");
    const int Tr = (int)ceil_div(N, Br), Tc = (int)ceil_div(N, Bc);
    for (int j = 0; j < Tc; j++) {
        const int k0 = j * Bc, kv_rows = min_int(Bc, N - k0);
        counted_copy(K_j, K + (size_t)k0 * d, (size_t)kv_rows * d, &io->read); /* once per key block */
        counted_copy(V_j, V + (size_t)k0 * d, (size_t)kv_rows * d, &io->read);
        memset(dK_j, 0, sizeof(float) * Bc * d);
        memset(dV_j, 0, sizeof(float) * Bc * d);
        for (int i = causal ? k0 / Br : 0; i < Tr; i++) {
            const int q0 = i * Br, q_rows = min_int(Br, N - q0);
            counted_copy(Q_i, Q + (size_t)q0 * d, (size_t)q_rows * d, &io->read);
            counted_copy(dO_i, dO + (size_t)q0 * d, (size_t)q_rows * d, &io->read);
            counted_copy(L_i, L + q0, (size_t)q_rows, &io->read);
            counted_copy(D_i, D + q0, (size_t)q_rows, &io->read);
            /* P_ij recomputed from L_i, dP_ij = dO_i V_j^T, dS_ij = P_ij o (dP_ij - D_i) */
            for (int r = 0; r < q_rows; r++)
                for (int c = 0; c < kv_rows; c++) {
                    float s, dp;
                    fma_dots(Q_i + r * d, K_j + c * d, dO_i + r * d, V_j + c * d, d, &s, &dp);
                    /* ASSIGNMENT BEGIN bwd-ds [cpu]: what `make assignment CH=07` replaces with the stub below */
                    /* ASSIGNMENT STUB bwd-ds
                    // TODO: P_ij from the forward's L_i (natural log; s * scale_log2 is the score in log2 units),
                    // 0 where the mask hides key k0 + c from query q0 + r; then dS_ij = P_ij (dP_ij - D_i).
                    // README: "The mathematics".
                    const float p = 0.f;
                    P[r * Bc + c] = p;
                    dS[r * Bc + c] = 0.f;
                    */
                    const float p = causal && k0 + c > q0 + r ? 0.f : exp2f(s * scale_log2 - L_i[r] * LOG2E);
                    P[r * Bc + c] = p;
                    dS[r * Bc + c] = p * (dp - D_i[r]);
                    /* ASSIGNMENT END bwd-ds */
                }
            /* dV_j += P_ij^T dO_i, dK_j += scale dS_ij^T Q_i: this visit's sums over the queries r (in order, the
             * features x innermost), then added */
            memset(dV_ij, 0, sizeof(float) * Bc * d);
            memset(dK_ij, 0, sizeof(float) * Bc * d);
            for (int r = 0; r < q_rows; r++)
                for (int c = 0; c < kv_rows; c++) {
                    fma_row(dV_ij + c * d, P[r * Bc + c], dO_i + r * d, d);
                    fma_row(dK_ij + c * d, dS[r * Bc + c], Q_i + r * d, d);
                }
            for (int x = 0; x < kv_rows * d; x++) {
                dV_j[x] += dV_ij[x];
                dK_j[x] += dK_ij[x] * scale;
            }
            if (!dq_atomic) continue;
            /* dQ_i += scale dS_ij K_j: each element one atomic add into dQ in HBM (4 bytes written); its sum over
             * the keys c in order */
            memset(dQ_i, 0, sizeof(float) * Br * d);
            for (int r = 0; r < q_rows; r++)
                for (int c = 0; c < kv_rows; c++) fma_row(dQ_i + r * d, dS[r * Bc + c], K_j + c * d, d);
            for (size_t x = 0; x < (size_t)q_rows * d; x++) dQ_i[x] *= scale;
            for (size_t x = 0; x < (size_t)q_rows * d; x++) dQ[(size_t)q0 * d + x] += dQ_i[x];
            io->write += sizeof(float) * (size_t)q_rows * d;
        }
        counted_copy(dK + (size_t)k0 * d, dK_j, (size_t)kv_rows * d, &io->write); /* once per key block */
        counted_copy(dV + (size_t)k0 * d, dV_j, (size_t)kv_rows * d, &io->write);
    }
    free(K_j), free(V_j), free(dK_j), free(dV_j), free(Q_i), free(dO_i), free(dQ_i), free(dK_ij), free(dV_ij),
        free(L_i), free(D_i), free(P), free(dS);
}

/* --dq pass, flash_dq, one head: a block per query block i keeps Q_i, dO_i, L_i; D_i from dO_i and O_i (read
 * once), stored; the key blocks up to the one holding Q_i's last real row (the mask) or all, each read once per
 * visit; dQ_i's sum over them (every key in order, the features innermost), scaled and stored once. */
static void flash_dq_head_cpu(const float *Q, const float *K, const float *V, const float *O, const float *dO,
                              const float *L, float *D, float *dQ, int N, int d, int Br, int Bc, int causal,
                              IoBytes *io) {
    const float scale = 1.f / sqrtf((float)d), scale_log2 = scale * LOG2E;
    float *Q_i = host_alloc(sizeof(float) * Br * d, "Q_i"), *dO_i = host_alloc(sizeof(float) * Br * d, "dO_i");
    float *dQ_i = host_alloc(sizeof(float) * Br * d, "dQ_i"), *O_r = host_alloc(sizeof(float) * d, "a row of O_i");
    float *K_j = host_alloc(sizeof(float) * Bc * d, "K_j"), *V_j = host_alloc(sizeof(float) * Bc * d, "V_j");
    float *L_i = host_alloc(sizeof(float) * Br, "L_i"), *D_i = host_alloc(sizeof(float) * Br, "D_i");
    const int Tr = (int)ceil_div(N, Br), Tc = (int)ceil_div(N, Bc);
    for (int i = 0; i < Tr; i++) {
        const int q0 = i * Br, q_rows = min_int(Br, N - q0);
        counted_copy(Q_i, Q + (size_t)q0 * d, (size_t)q_rows * d, &io->read); /* once per query block */
        counted_copy(dO_i, dO + (size_t)q0 * d, (size_t)q_rows * d, &io->read);
        counted_copy(L_i, L + q0, (size_t)q_rows, &io->read);
        for (int r = 0; r < q_rows; r++) { /* D_i = dO_i . O_i */
            counted_copy(O_r, O + (size_t)(q0 + r) * d, (size_t)d, &io->read);
            float acc = 0.f;
            for (int x = 0; x < d; x++) acc = fmaf(dO_i[r * d + x], O_r[x], acc);
            D_i[r] = acc;
            counted_copy(D + q0 + r, &acc, 1, &io->write);
        }
        memset(dQ_i, 0, sizeof(float) * Br * d);
        const int j_end = causal ? (q0 + q_rows - 1) / Bc + 1 : Tc;
        for (int j = 0; j < j_end; j++) {
            const int k0 = j * Bc, kv_rows = min_int(Bc, N - k0);
            counted_copy(K_j, K + (size_t)k0 * d, (size_t)kv_rows * d, &io->read); /* once per visit */
            counted_copy(V_j, V + (size_t)k0 * d, (size_t)kv_rows * d, &io->read);
            /* P_ij and dS_ij recomputed, as flash_dkdv does; dQ_i += dS_ij K_j */
            for (int r = 0; r < q_rows; r++)
                for (int c = 0; c < kv_rows; c++) {
                    if (causal && k0 + c > q0 + r) continue; /* dS_ij = 0 */
                    float s, dp;
                    fma_dots(Q_i + r * d, K_j + c * d, dO_i + r * d, V_j + c * d, d, &s, &dp);
                    const float p = exp2f(s * scale_log2 - L_i[r] * LOG2E);
                    fma_row(dQ_i + r * d, p * (dp - D_i[r]), K_j + c * d, d);
                }
        }
        for (size_t x = 0; x < (size_t)q_rows * d; x++) dQ_i[x] *= scale;
        counted_copy(dQ + (size_t)q0 * d, dQ_i, (size_t)q_rows * d, &io->write); /* once, plain stores */
    }
    free(Q_i), free(dO_i), free(dQ_i), free(O_r), free(K_j), free(V_j), free(L_i), free(D_i);
}

void flash_backward_cpu(const Options *o, BwdHost *t, IoBytes *io, double *ms) {
    float *D = host_alloc(sizeof(float) * t->rows, "D");
    const int pass = bwd_dq_pass(o);
    double t0 = wall_ms();
    if (!pass) flash_d_cpu(t->dO, t->O, D, t->dQ, t->rows, o->d, &io[FLASH_D]);
    for (size_t h = 0; pass && h < (size_t)o->B * o->H; h++) {
        const size_t at = h * o->N * o->d, rows = h * o->N;
        flash_dq_head_cpu(t->Q + at, t->K + at, t->V + at, t->O + at, t->dO + at, t->L + rows, D + rows, t->dQ + at,
                          o->N, o->d, o->Br, o->Bc, o->causal, &io[PASS_DQ]);
    }
    double t1 = wall_ms();
    ms[FLASH_D] = t1 - t0;
    for (size_t h = 0; h < (size_t)o->B * o->H; h++) {
        const size_t at = h * o->N * o->d, rows = h * o->N;
        flash_head_cpu(t->Q + at, t->K + at, t->V + at, t->dO + at, t->L + rows, D + rows, t->dQ + at, t->dK + at,
                       t->dV + at, o->N, o->d, o->Br, o->Bc, o->causal, !pass, &io[FLASH_MAIN]);
    }
    ms[FLASH_MAIN] = wall_ms() - t1;
    free(D);
}

/* ---- step 3: step 2's loop nest in the storage type ----------------------------------------------------------- */

void tc_scores(float s, float dp, float L_i, float D_i, float scale_log2, DType t, float *p_t, float *ds_t) {
    const float p = exp2f(s * scale_log2 - L_i * LOG2E);
    *p_t = stored_value(p, t);
    *ds_t = stored_value(p * (dp - D_i), t);
}

/* dst <- src as storage type t holds it, n elements, adding their bytes in t to *bytes (a load or a store of
 * 16-bit elements; src already holds values of t where it stands for a load). */
static void stored_copy(float *dst, const float *src, size_t n, DType t, unsigned long long *bytes) {
    for (size_t x = 0; x < n; x++) dst[x] = stored_value(src[x], t);
    *bytes += dtype_size(t) * n;
}

/* tc_bwd_d: D_i = dO_i . O_i (stored values, fp32 sum) for every row, and dQ (fp32) set to 0. */
static void tc_d_cpu(const float *dO, const float *O, float *D, float *dQ, size_t rows, int d, DType t, IoBytes *io) {
    float *a = host_alloc(sizeof(float) * d, "dO_i"), *b = host_alloc(sizeof(float) * d, "O_i");
    float *zero = host_alloc(sizeof(float) * d, "a row of zeros");
    memset(zero, 0, sizeof(float) * d);
    for (size_t i = 0; i < rows; i++) {
        stored_copy(a, dO + i * d, (size_t)d, t, &io->read);
        stored_copy(b, O + i * d, (size_t)d, t, &io->read);
        float acc = 0.f;
        for (int x = 0; x < d; x++) acc = fmaf(a[x], b[x], acc);
        counted_copy(D + i, &acc, 1, &io->write);
        counted_copy(dQ + i * d, zero, (size_t)d, &io->write);
    }
    free(a), free(b), free(zero);
}

/* tc_bwd, one head: step 2's loop nest (flash_head_cpu) with the kernel's precision: 16-bit loads and stores of Q,
 * K, V, dO, dK, dV, fp32 sums, P_ij and dS_ij rounded to t before they are multiplied (tc_scores), dK_j scaled once
 * at the end; dQ_i's share added in fp32 (4 bytes written per element, the kernel's atomic adds). */
static void tc_head_cpu(const float *Q, const float *K, const float *V, const float *dO, const float *L,
                        const float *D, float *dQ, float *dK, float *dV, int N, int d, int Br, int Bc, int causal,
                        DType t, IoBytes *io) {
    const float scale = 1.f / sqrtf((float)d), scale_log2 = scale * LOG2E;
    float *K_j = host_alloc(sizeof(float) * Bc * d, "K_j"), *V_j = host_alloc(sizeof(float) * Bc * d, "V_j");
    float *dK_j = host_alloc(sizeof(float) * Bc * d, "dK_j"), *dV_j = host_alloc(sizeof(float) * Bc * d, "dV_j");
    float *Q_i = host_alloc(sizeof(float) * Br * d, "Q_i"), *dO_i = host_alloc(sizeof(float) * Br * d, "dO_i");
    float *L_i = host_alloc(sizeof(float) * Br, "L_i"), *D_i = host_alloc(sizeof(float) * Br, "D_i");
    float *P = host_alloc(sizeof(float) * Br * Bc, "P_ij"), *dS = host_alloc(sizeof(float) * Br * Bc, "dS_ij");
    float *dQ_i = host_alloc(sizeof(float) * d, "a row of dQ_i's share");
    const int Tr = (int)ceil_div(N, Br), Tc = (int)ceil_div(N, Bc);
    for (int j = 0; j < Tc; j++) {
        const int k0 = j * Bc, kv_rows = min_int(Bc, N - k0);
        stored_copy(K_j, K + (size_t)k0 * d, (size_t)kv_rows * d, t, &io->read); /* once per key block */
        stored_copy(V_j, V + (size_t)k0 * d, (size_t)kv_rows * d, t, &io->read);
        memset(dK_j, 0, sizeof(float) * Bc * d);
        memset(dV_j, 0, sizeof(float) * Bc * d);
        for (int i = causal ? k0 / Br : 0; i < Tr; i++) {
            const int q0 = i * Br, q_rows = min_int(Br, N - q0);
            stored_copy(Q_i, Q + (size_t)q0 * d, (size_t)q_rows * d, t, &io->read);
            stored_copy(dO_i, dO + (size_t)q0 * d, (size_t)q_rows * d, t, &io->read);
            counted_copy(L_i, L + q0, (size_t)q_rows, &io->read);
            counted_copy(D_i, D + q0, (size_t)q_rows, &io->read);
            for (int r = 0; r < q_rows; r++)
                for (int c = 0; c < kv_rows; c++) {
                    float s, dp;
                    fma_dots(Q_i + r * d, K_j + c * d, dO_i + r * d, V_j + c * d, d, &s, &dp);
                    if (causal && k0 + c > q0 + r) P[r * Bc + c] = dS[r * Bc + c] = 0.f;
                    else tc_scores(s, dp, L_i[r], D_i[r], scale_log2, t, &P[r * Bc + c], &dS[r * Bc + c]);
                }
            /* dV_j += P_ij^T dO_i, dK_j += dS_ij^T Q_i (times scale at the end): each element's sum over the
             * queries r in order, the features x innermost (contiguous rows) */
            for (int r = 0; r < q_rows; r++)
                for (int c = 0; c < kv_rows; c++) {
                    const float p = P[r * Bc + c], ds = dS[r * Bc + c];
                    fma_row(dV_j + c * d, p, dO_i + r * d, d);
                    fma_row(dK_j + c * d, ds, Q_i + r * d, d);
                }
            /* dQ_i += scale dS_ij K_j: each element one fp32 atomic add into dQ in HBM (4 bytes written); its sum
             * over the keys c in order */
            for (int r = 0; r < q_rows; r++) {
                memset(dQ_i, 0, sizeof(float) * d);
                for (int c = 0; c < kv_rows; c++) fma_row(dQ_i, dS[r * Bc + c], K_j + c * d, d);
                for (int x = 0; x < d; x++) dQ[(size_t)(q0 + r) * d + x] += scale * dQ_i[x];
            }
            io->write += sizeof(float) * (size_t)q_rows * d;
        }
        for (size_t x = 0; x < (size_t)kv_rows * d; x++) dK_j[x] *= scale;
        stored_copy(dK + (size_t)k0 * d, dK_j, (size_t)kv_rows * d, t, &io->write); /* once per key block, in t */
        stored_copy(dV + (size_t)k0 * d, dV_j, (size_t)kv_rows * d, t, &io->write);
    }
    free(K_j), free(V_j), free(dK_j), free(dV_j), free(Q_i), free(dO_i), free(L_i), free(D_i), free(P), free(dS),
        free(dQ_i);
}

void tc_backward_cpu(const Options *o, BwdHost *t, IoBytes *io, double *ms) {
    float *D = host_alloc(sizeof(float) * t->rows, "D");
    round_to_storage(t->O, t->n, o->dtype); /* O as the backward reads it: the forward's, stored in 16 bits */
    double t0 = wall_ms();
    tc_d_cpu(t->dO, t->O, D, t->dQ, t->rows, o->d, o->dtype, &io[FLASH_D]);
    double t1 = wall_ms();
    ms[FLASH_D] = t1 - t0;
    for (size_t h = 0; h < (size_t)o->B * o->H; h++) {
        const size_t at = h * o->N * o->d, rows = h * o->N;
        tc_head_cpu(t->Q + at, t->K + at, t->V + at, t->dO + at, t->L + rows, D + rows, t->dQ + at, t->dK + at,
                    t->dV + at, o->N, o->d, o->Br, o->Bc, o->causal, o->dtype, &io[FLASH_MAIN]);
    }
    ms[FLASH_MAIN] = wall_ms() - t1;
    free(D);
}
