/* ch07.h: chapter 07's host side: the problem's host copies, the float64 reference of the gradients and the
 * sampled check (reference.c, check.c), the CPU versions of the steps (cpu.c, and forward_cpu.c for the forward
 * that feeds them), the GPU run (gpu.c) and the chapter's table (chapter.c). The closed forms are in model.h, the
 * tiles in tiles.h, the launchers in kernels.h. */
#ifndef FA_CH07_H
#define FA_CH07_H

#include <stddef.h>

#include "attention_check.h"
#include "driver.h"
#include "io_bytes.h"
#include "model.h"
#include "reference.h"

extern const Chapter chapter07;

/* log2(e): the host versions work in log2 units and exp2, as the kernels do */
#define LOG2E 1.4426950408889634f

/* ---- the problem's host copies ---------------------------------------------------------------------------- */
typedef struct {
    float *Q, *K, *V, *dO;  /* inputs, [B, H, N, d]                                    */
    float *O, *L;           /* the forward's outputs: [B, H, N, d], [B, H, N]          */
    float *dQ, *dK, *dV;    /* the gradients, [B, H, N, d]                             */
    size_t n, rows;         /* elements of Q (and of each other [B, H, N, d]); of L    */
} BwdHost;

/* Q, K, V as every chapter draws them (attention_inputs.h), and dO uniform in [-1, 1) from a stream of its own
 * (the seed's second); the outputs allocated and poisoned (NaN). */
BwdHost bwd_host_make(const Options *o);
void bwd_host_free(BwdHost *t);
void bwd_dO_input(const Options *o, float *dO);

/* ---- reference.c: the gradients in float64, one head (q, k, v, dO: N x d) -------------------------------------
 * Pass 1, every row: L_i (natural-log log-sum-exp of the scaled scores) and D_i = dO_i . O_i, O from the float64
 * forward (rows run on `threads` threads). Pass 2, for the listed rows only: dQ of query rows, dK and dV of key
 * rows, each from L and D, recomputing P_ij = exp(scale q_i . k_j - L_i) and dP_ij = dO_i . v_j:
 *     dS_ij = P_ij (dP_ij - D_i),   dQ_i = scale sum_j dS_ij k_j,   dK_j = scale sum_i dS_ij q_i,
 *     dV_j = sum_i P_ij dO_i. */
void bwd_reference_stats(const float *q, const float *k, const float *v, const float *dO, int N, int d, int causal,
                         double *L, double *D, int threads);
void bwd_reference_dq(const float *q, const float *k, const float *v, const float *dO, const double *L,
                      const double *D, int N, int d, int causal, const int *rows, int n, double *dq);
void bwd_reference_dkv(const float *q, const float *k, const float *v, const float *dO, const double *L,
                       const double *D, int N, int d, int causal, const int *rows, int n, double *dk, double *dv);
/* The loss whose gradient the backward computes, sum(O o dO), in float64 (for the finite-difference test). */
double bwd_reference_loss(const float *q, const float *k, const float *v, const float *dO, int N, int d, int causal);

/* ---- check.c: the sampled check of dQ, dK, dV, on the heads and rows the forward chapters' check picks ---------
 * (common/attention_check.h: ATTN_CHECK_HEADS heads; every row up to ATTN_FULL_CHECK_N tokens, ATTN_CHECK_ROWS
 * above) */

typedef struct {
    int N, d;
    int nheads, heads[ATTN_CHECK_HEADS];
    int nrows, *rows;        /* the checked rows of each head: query rows of dQ, key rows of dK and dV */
    double *dQ, *dK, *dV;    /* [nheads][nrows][d] */
} BwdExpected;

BwdExpected bwd_expected(const Options *o, const BwdHost *t);
void bwd_expected_free(BwdExpected *e);
/* dQ, dK, dV against e; a non-finite value anywhere in them fails (sampled or not). */
void bwd_compare(const BwdExpected *e, const Options *o, const BwdHost *t, ErrorStats *dq, ErrorStats *dk,
                 ErrorStats *dv);
/* Relative L2 error allowed for each gradient (README: how it was chosen). fp32 (steps 1, 2): a fixed rule of N.
 * fp16 and bf16 (step 3): chapter 05's rule: at most twice the worst relative error of the plain computation of
 * the same sampled rows in the storage type (tc_plain_grads), plus TC_TOL_ABS, never beyond a fixed bound per type;
 * t's O must hold the run's O as stored (rounded to the storage type). */
double bwd_tolerance(const Options *o, const BwdHost *t, const BwdExpected *e);
/* The plain computation of step 3 on e's heads and rows: gradients of the stored inputs, O as stored and the run's
 * L, every sum in fp32, P_ij and dS_ij rounded to the storage type before they are multiplied (tc_scores), dK and
 * dV rounded at the end, dQ fp32. Fills dq, dk, dv with the relative errors against e. */
void tc_plain_grads(const Options *o, const BwdHost *t, const BwdExpected *e, ErrorStats *dq, ErrorStats *dk,
                    ErrorStats *dv);
/* The check on run: the worst of dQ, dK, dV against bwd_tolerance. */
void bwd_check_into(const Options *o, const BwdHost *t, KernelRun *run);

/* ---- forward_cpu.c and cpu.c: the CPU versions, on host arrays that stand in for HBM ---------------------------
 * Bytes are counted where the kernels load and store (io), time is host wall clock (ms). */
/* The forward: t's O and L from the float64 reference, rounded to fp32; io the bytes of chapter 03's kernel. */
void fwd_forward_cpu(const Options *o, BwdHost *t, IoBytes *io, double *ms);
/* Step 1: six kernels, io[k] and ms[k] for k < NAIVE_KERNELS; P, dP and dS held for the whole problem per head. */
void naive_backward_cpu(const Options *o, BwdHost *t, IoBytes *io, double *ms);
/* Step 2: flash_bwd_d then flash_bwd, io[0..1], ms[0..1]; with --dq pass flash_dq then flash_dkdv. */
void flash_backward_cpu(const Options *o, BwdHost *t, IoBytes *io, double *ms);
/* Step 3: tc_bwd_d then tc_bwd, io[0..1], ms[0..1], in o->dtype; t->O is first rounded to it (the O the backward
 * reads). */
void tc_backward_cpu(const Options *o, BwdHost *t, IoBytes *io, double *ms);
/* Step 3's score-wise arithmetic, shared by its CPU version and the plain rule: from s = q_i . k_j and
 * dp = dO_i . v_j (fp32 sums of stored values), P_ij = exp(scale s - L_i) and dS_ij = P_ij (dp - D_i), each rounded
 * to t. */
void tc_scores(float s, float dp, float L_i, float D_i, float scale_log2, DType t, float *p_t, float *ds_t);

/* ---- gpu.c ---------------------------------------------------------------------------------------------------- */
size_t bwd_device_bytes(const Options *o);
size_t bwd_host_bytes(const Options *o, int cpu);
void bwd_run_gpu(const Options *o, const DeviceInfo *dev, KernelRun *runs);
void bwd_run_cpu(const Options *o, KernelRun *runs);
/* One forward and backward on the GPU for tests: t's inputs up, outputs poisoned, the forward, then o's step's
 * kernels (the instrumented build where counted != 0: io[k] receives row k's bytes, row 0 the forward's), t's
 * O, L, dQ, dK, dV down. */
void bwd_pass_gpu(const Options *o, BwdHost *t, int counted, IoBytes *io);

#endif
