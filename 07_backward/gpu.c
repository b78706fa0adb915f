/* gpu.c: chapter 07's runs (ch07.h): on the GPU, the forward and each backward kernel timed alone, the instrumented
 * build counted, one checked pass; on the CPU, the forward of forward_cpu.c and the loop nests of cpu.c, counted and
 * checked the same way. */
#include <string.h>

#include "ch07.h"
#include "checked_math.h"
#include "cuda_check.h"
#include "host_tensor.h"
#include "io_tally.cuh"
#include "kernels.h"
#include "save.h"

typedef unsigned long long u64;

/* The backward kernels of a step, in launch order: the timed build and the instrumented one. */
typedef struct {
    int n;
    BwdLaunch timed[NAIVE_KERNELS], counted[NAIVE_KERNELS];
} Step;

static const Step STEPS[BWD_STEPS] = {
    [BWD_NAIVE] = {NAIVE_KERNELS,
                   {naive_p_launch, naive_dv_launch, naive_dp_launch, naive_ds_launch, naive_dq_launch, naive_dk_launch},
                   {naive_p_launch_counted, naive_dv_launch_counted, naive_dp_launch_counted, naive_ds_launch_counted,
                    naive_dq_launch_counted, naive_dk_launch_counted}},
    [BWD_FLASH] = {FLASH_KERNELS, {flash_bwd_d_launch, flash_bwd_launch},
                   {flash_bwd_d_launch_counted, flash_bwd_launch_counted}},
    [BWD_TC] = {FLASH_KERNELS, {tc_bwd_d_launch, tc_bwd_launch}, {tc_bwd_d_launch_counted, tc_bwd_launch_counted}},
    [BWD_VEC] = {FLASH_KERNELS, {tc_bwd_d_launch, tc_vec_bwd_launch},
                 {tc_bwd_d_launch_counted, tc_vec_bwd_launch_counted}},
    [BWD_WIDE] = {FLASH_KERNELS, {tc_bwd_d_launch, tc_wide_bwd_launch},
                  {tc_bwd_d_launch_counted, tc_wide_bwd_launch_counted}},
    [BWD_WGMMA] = {FLASH_KERNELS, {tc_bwd_d_launch, tc_wgmma_bwd_launch},
                   {tc_bwd_d_launch_counted, tc_wgmma_bwd_launch_counted}},
    [BWD_LEAN] = {FLASH_KERNELS, {tc_bwd_d_launch, tc_lean_bwd_launch},
                  {tc_bwd_d_launch_counted, tc_lean_bwd_launch_counted}},
    [BWD_BULK] = {FLASH_KERNELS, {tc_bwd_d_launch, tc_bulk_bwd_launch},
                  {tc_bwd_d_launch_counted, tc_bulk_bwd_launch_counted}},
    [BWD_OVL] = {FLASH_KERNELS, {tc_bwd_d_launch, tc_ovl_bwd_launch}, {tc_bwd_d_launch_counted, tc_ovl_bwd_launch_counted}},
    [BWD_WS] = {FLASH_KERNELS, {tc_bwd_d_launch, tc_ws_bwd_launch}, {tc_bwd_d_launch_counted, tc_ws_bwd_launch_counted}},
    [BWD_TILE] = {FLASH_KERNELS, {tc_bwd_d_launch, tc_tile_bwd_launch},
                  {tc_bwd_d_launch_counted, tc_tile_bwd_launch_counted}},
    [BWD_TILE_LEAN] = {FLASH_KERNELS, {tc_bwd_d_launch, tc_tile_lean_bwd_launch},
                       {tc_bwd_d_launch_counted, tc_tile_lean_bwd_launch_counted}},
    [BWD_KV_REGS] = {FLASH_KERNELS, {tc_bwd_d_launch, tc_kvreg_bwd_launch},
                     {tc_bwd_d_launch_counted, tc_kvreg_bwd_launch_counted}},
    [BWD_DQ_PAIRS] = {FLASH_KERNELS, {tc_bwd_d_launch, tc_pairs_bwd_launch},
                      {tc_bwd_d_launch_counted, tc_pairs_bwd_launch_counted}},
    [BWD_DQ_QUADS] = {FLASH_KERNELS, {tc_bwd_d_launch, tc_quads_bwd_launch},
                      {tc_bwd_d_launch_counted, tc_quads_bwd_launch_counted}},
    [BWD_STAT_COPIES] = {FLASH_KERNELS, {tc_bwd_d_launch, tc_stats_bwd_launch},
                         {tc_bwd_d_launch_counted, tc_stats_bwd_launch_counted}},
    [BWD_DQ_SQUARES] = {FLASH_KERNELS, {tc_bwd_d_launch, tc_squares_bwd_launch},
                        {tc_bwd_d_launch_counted, tc_squares_bwd_launch_counted}},
    [BWD_MATRIX_STORES] = {FLASH_KERNELS, {tc_bwd_d_launch, tc_stores_bwd_launch},
                           {tc_bwd_d_launch_counted, tc_stores_bwd_launch_counted}},
};

/* Step 2 with --dq pass: flash_dq (it writes D and dQ), then flash_dkdv. */
static const Step DQ_PASS_STEP = {FLASH_KERNELS, {flash_dq_launch, flash_dkdv_launch},
                                  {flash_dq_launch_counted, flash_dkdv_launch_counted}};

/* Step 1's matrices P, dP and dS: B H N^2 floats each. */
static u64 nn_elements(const Options *o) { return count_mul3((u64)o->B, (u64)o->H, count_mul((u64)o->N, (u64)o->N)); }

size_t bwd_device_bytes(const Options *o) {
    const u64 rows = count_mul3((u64)o->B, (u64)o->H, (u64)o->N), n = count_mul(rows, (u64)o->d);
    if (bwd_16bit(o)) /* fp32 Q, K, V, O (the forward's), dQ; L, D; Q, K, V, O, dO, dK, dV in the type */
        return count_add(count_add(count_mul(sizeof(float) * 5, n), count_mul(sizeof(float) * 2, rows)),
                         count_mul(dtype_size(o->dtype) * 7, n));
    /* Q, K, V, O, dO, dQ, dK, dV; L, D; step 1's P, dP, dS */
    u64 b = count_add(count_mul(sizeof(float) * 8, n), count_mul(sizeof(float) * 2, rows));
    if (bwd_step(o) == BWD_NAIVE) b = count_add(b, count_mul(sizeof(float) * 3, nn_elements(o)));
    return b;
}

size_t bwd_host_bytes(const Options *o, int cpu) {
    const u64 rows = count_mul3((u64)o->B, (u64)o->H, (u64)o->N), n = count_mul(rows, (u64)o->d);
    u64 b = count_add(count_mul(sizeof(float) * 9, n), count_mul(sizeof(float) * 2, rows)); /* BwdHost; D */
    if (cpu && bwd_step(o) == BWD_NAIVE) /* the CPU version's P, dP, dS of one head */
        b = count_add(b, count_mul(sizeof(float) * 3, count_mul((u64)o->N, (u64)o->N)));
    if (!o->no_check) { /* the check: rows, L and D of a head per checked head, the expected rows */
        const u64 heads = count_mul((u64)o->B, (u64)o->H), nheads = heads < ATTN_CHECK_HEADS ? heads : ATTN_CHECK_HEADS;
        const u64 nrows = o->N <= ATTN_FULL_CHECK_N ? (u64)o->N : ATTN_CHECK_ROWS;
        b = count_add(b, sizeof(int) * ((u64)o->N < ATTN_CHECK_ROWS ? ATTN_CHECK_ROWS : (u64)o->N));
        b = count_add(b, count_mul(sizeof(double), count_add(count_mul(2, count_mul(nheads, (u64)o->N)),
                                                             count_mul3(3, nheads * nrows, (u64)o->d))));
        if (o->dtype != DTYPE_FP32) /* step 3's rule: the plain computation's rows of a head and its D */
            b = count_add(b, count_mul(sizeof(float), count_add(count_mul3(3, nrows, (u64)o->d), (u64)o->N)));
    }
    return b;
}

/* --save: the inputs, the forward's outputs and the gradients, as they are in t, in the storage type (step 3: dQ, fp32
 * in t, rounded to it like the other gradients, as the save plan says). */
static void save_host(const Options *o, const BwdHost *t) {
    long long bhnd[4];
    save_shape_bhnd(o, bhnd);
    save_attention(o, t->Q, t->K, t->V, t->O, t->L);
    save_array(o, "dO", dtype_name(o->dtype), 4, bhnd, t->dO);
    save_array(o, "dQ", dtype_name(o->dtype), 4, bhnd, t->dQ);
    save_array(o, "dK", dtype_name(o->dtype), 4, bhnd, t->dK);
    save_array(o, "dV", dtype_name(o->dtype), 4, bhnd, t->dV);
}

/* ---- on the GPU ------------------------------------------------------------------------------------------------ */

typedef struct {
    AttnArgs f;      /* the forward's arguments (O and L are the backward's inputs) */
    BwdArgs b;
    const Step *step;
    size_t n, rows, nn;
    int k;           /* the backward kernel launch_one runs */
    float *O_host;   /* step 3: the host array through which the forward's fp32 O goes to b.Ot, rounded (t's O) */
} Device;

/* Step 1 and 2: every array fp32. Step 3: the forward still runs in fp32 on Q, K, V as the storage type holds
 * them (the host arrays are rounded already), and the backward reads its own copies of Q, K, V, dO and of the
 * forward's O in the storage type; dK and dV come back in it, dQ in fp32 (no fp32 dO, dK, dV on the device). */
static Device device_up(const Options *o, BwdHost *t) {
    Device dv;
    memset(&dv, 0, sizeof(dv));
    dv.step = bwd_dq_pass(o) ? &DQ_PASS_STEP : &STEPS[bwd_step(o)];
    dv.n = t->n, dv.rows = t->rows;
    const size_t e = sizeof(float);
    const int tc = bwd_16bit(o);
    float *Q = dev_alloc(e * t->n), *K = dev_alloc(e * t->n), *V = dev_alloc(e * t->n);
    float *dO = tc ? NULL : dev_alloc(e * t->n);
    float *O = dev_alloc(e * t->n), *L = dev_alloc(e * t->rows);
    dev_upload(Q, t->Q, t->n, DTYPE_FP32), dev_upload(K, t->K, t->n, DTYPE_FP32);
    dev_upload(V, t->V, t->n, DTYPE_FP32);
    if (dO) dev_upload(dO, t->dO, t->n, DTYPE_FP32);
    AttnArgs f = {Q, K, V, O, L, {NULL}, o->B, o->H, o->N, o->d, o->Br, o->Bc, o->causal, DTYPE_FP32};
    dv.f = f;
    BwdArgs b = {Q, K, V, O, dO, L, dev_alloc(e * t->rows), dev_alloc(e * t->n), tc ? NULL : dev_alloc(e * t->n),
                 tc ? NULL : dev_alloc(e * t->n), NULL, NULL, NULL, o->B, o->H, o->N, o->d, o->Br, o->Bc, o->causal};
    if (bwd_step(o) == BWD_NAIVE) {
        dv.nn = (size_t)nn_elements(o);
        b.P = dev_alloc(e * dv.nn), b.dP = dev_alloc(e * dv.nn), b.dS = dev_alloc(e * dv.nn);
    }
    if (tc) {
        const size_t et = dtype_size(o->dtype);
        void *Qt = dev_alloc(et * t->n), *Kt = dev_alloc(et * t->n), *Vt = dev_alloc(et * t->n);
        void *dOt = dev_alloc(et * t->n);
        dev_upload(Qt, t->Q, t->n, o->dtype), dev_upload(Kt, t->K, t->n, o->dtype);
        dev_upload(Vt, t->V, t->n, o->dtype), dev_upload(dOt, t->dO, t->n, o->dtype);
        b.Qt = Qt, b.Kt = Kt, b.Vt = Vt, b.dOt = dOt;
        b.Ot = dev_alloc(et * t->n), b.dKt = dev_alloc(et * t->n), b.dVt = dev_alloc(et * t->n);
        b.dtype = o->dtype;
        dv.O_host = t->O;
    }
    dv.b = b;
    return dv;
}

static void device_down(Device *dv) {
    dev_free((void *)dv->b.Q), dev_free((void *)dv->b.K), dev_free((void *)dv->b.V), dev_free((void *)dv->b.dO);
    dev_free((void *)dv->b.O), dev_free((void *)dv->b.L), dev_free(dv->b.D);
    dev_free(dv->b.dQ), dev_free(dv->b.dK), dev_free(dv->b.dV);
    if (dv->b.P) dev_free(dv->b.P), dev_free(dv->b.dP), dev_free(dv->b.dS);
    if (dv->b.Qt) {
        dev_free((void *)dv->b.Qt), dev_free((void *)dv->b.Kt), dev_free((void *)dv->b.Vt);
        dev_free((void *)dv->b.dOt), dev_free((void *)dv->b.Ot), dev_free(dv->b.dKt), dev_free(dv->b.dVt);
    }
}

/* Every output poisoned, then the forward and the step's kernels in order: the timed build, or the instrumented one
 * with io[0] the forward's bytes and io[1 + k] backward kernel k's. */
static void device_pass(const Device *dv, int counted, IoBytes *io) {
    const size_t e = sizeof(float);
    dev_poison(dv->f.O, e * dv->n), dev_poison(dv->f.L, e * dv->rows), dev_poison(dv->b.D, e * dv->rows);
    dev_poison(dv->b.dQ, e * dv->n);
    if (dv->b.dK) dev_poison(dv->b.dK, e * dv->n), dev_poison(dv->b.dV, e * dv->n);
    if (dv->b.P) dev_poison(dv->b.P, e * dv->nn), dev_poison(dv->b.dP, e * dv->nn), dev_poison(dv->b.dS, e * dv->nn);
    if (dv->b.Ot) {
        const size_t et = dtype_size(dv->b.dtype);
        dev_poison((void *)dv->b.Ot, et * dv->n), dev_poison(dv->b.dKt, et * dv->n), dev_poison(dv->b.dVt, et * dv->n);
    }
    if (counted) io_counter_reset();
    (counted ? fwd_flash_v2_launch_counted : fwd_flash_v2_launch)(&dv->f);
    if (counted) io[0] = io_counter_read();
    if (dv->b.Ot) { /* step 3: the forward's O, stored in the storage type through the host (not timed, not counted) */
        dev_download(dv->O_host, dv->f.O, dv->n, DTYPE_FP32);
        dev_upload((void *)dv->b.Ot, dv->O_host, dv->n, dv->b.dtype);
    }
    for (int k = 0; k < dv->step->n; k++) {
        if (!counted) {
            dv->step->timed[k](&dv->b);
            continue;
        }
        io_counter_reset();
        dv->step->counted[k](&dv->b);
        io[1 + k] = io_counter_read();
    }
    CUDA_CHECK(cudaDeviceSynchronize());
}

/* Step 3: O as the backward read it, dK and dV from the storage type; dQ fp32 in every step. */
static void device_download(const Device *dv, BwdHost *t) {
    dev_download(t->L, dv->f.L, t->rows, DTYPE_FP32), dev_download(t->dQ, dv->b.dQ, t->n, DTYPE_FP32);
    if (dv->b.Ot) {
        dev_download(t->O, dv->b.Ot, t->n, dv->b.dtype);
        dev_download(t->dK, dv->b.dKt, t->n, dv->b.dtype), dev_download(t->dV, dv->b.dVt, t->n, dv->b.dtype);
        return;
    }
    dev_download(t->O, dv->f.O, t->n, DTYPE_FP32);
    dev_download(t->dK, dv->b.dK, t->n, DTYPE_FP32), dev_download(t->dV, dv->b.dV, t->n, DTYPE_FP32);
}

static void launch_forward(void *ctx) {
    const Device *dv = ctx;
    fwd_flash_v2_launch(&dv->f);
}

static void launch_one(void *ctx) {
    const Device *dv = ctx;
    dv->step->timed[dv->k](&dv->b);
}

void bwd_run_gpu(const Options *o, const DeviceInfo *dev, KernelRun *runs) {
    BwdHost t = bwd_host_make(o);
    Device dv = device_up(o, &t);
    /* One pass first, so that every kernel's inputs hold what the kernels before it write (a NaN-poisoned input does
     * not change a kernel's instructions or its traffic, but the timed runs should see real values). Then the
     * forward and each backward kernel alone, in launch order: a kernel's repetitions start from what the one before
     * left. flash_bwd's repetitions add into a dQ that flash_bwd_d zeroed once: the same instructions and bytes
     * (--dq pass: flash_dq stores dQ whole each time). */
    device_pass(&dv, 0, NULL);
    runs[0].time = time_launches(launch_forward, &dv, o->warmup, o->reps, !o->no_flush);
    runs[0].have_time = 1;
    for (int k = 0; k < dv.step->n; k++) {
        dv.k = k;
        runs[1 + k].time = time_launches(launch_one, &dv, o->warmup, o->reps, !o->no_flush);
        runs[1 + k].have_time = 1;
    }
    if (!o->profile) { /* --profile: each kernel exactly once, what ncu should see */
        IoBytes io[MAX_KERNELS];
        device_pass(&dv, 1, io);
        for (int k = 0; k <= dv.step->n; k++) runs[k].counted = io[k], runs[k].have_counted = 1;
    }
    /* The checked pass (also the one --save writes out): poisoned outputs, the timed build, downloaded. */
    if (!o->no_check || o->save_dir) {
        device_pass(&dv, 0, NULL);
        device_download(&dv, &t);
    }
    if (!o->no_check) bwd_check_into(o, &t, &runs[dv.step->n]);
    if (o->save_dir) save_host(o, &t);
    device_down(&dv);
    bwd_host_free(&t);
}

void bwd_pass_gpu(const Options *o, BwdHost *t, int counted, IoBytes *io) {
    Device dv = device_up(o, t);
    device_pass(&dv, counted, io);
    device_download(&dv, t);
    device_down(&dv);
}

/* ---- on the CPU -------------------------------------------------------------------------------------------------- */

void bwd_run_cpu(const Options *o, KernelRun *runs) {
    BwdHost t = bwd_host_make(o);
    IoBytes io[MAX_KERNELS];
    double ms[MAX_KERNELS];
    memset(io, 0, sizeof(io));
    memset(ms, 0, sizeof(ms));
    fwd_forward_cpu(o, &t, &io[0], &ms[0]);
    const int n = bwd_step(o) == BWD_NAIVE ? NAIVE_KERNELS : FLASH_KERNELS;
    if (bwd_step(o) == BWD_NAIVE) naive_backward_cpu(o, &t, io + 1, ms + 1);
    else if (bwd_16bit(o)) tc_backward_cpu(o, &t, io + 1, ms + 1);
    else flash_backward_cpu(o, &t, io + 1, ms + 1);
    for (int k = 0; k <= n; k++) {
        runs[k].time.median_ms = runs[k].time.min_ms = ms[k];
        runs[k].time.reps = 1;
        runs[k].have_time = 1;
        runs[k].counted = io[k];
        runs[k].have_counted = 1;
    }
    if (!o->no_check) bwd_check_into(o, &t, &runs[n]);
    if (o->save_dir) save_host(o, &t);
    bwd_host_free(&t);
}
