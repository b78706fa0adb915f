/* attention.c: the runners every FlashAttention chapter shares (attention.h): the GPU run (timed, counted,
 * checked) and the CPU run. */
#include "attention.h"

#include <math.h>
#include <string.h>

#include "cuda_check.h"
#include "host_tensor.h"
#include "io_tally.cuh"
#include "save.h"

/* --save: the problem's inputs and outputs as they are in t (save.h). */
static void save_host(const Options *o, const AttnHost *t) { save_attention(o, t->Q, t->K, t->V, t->O, t->L); }

/* ---- on the GPU ------------------------------------------------------------------------------------------ */

typedef struct {
    const AttnChapter *c;
    AttnArgs args;
    size_t n, rows;
    DType dtype; /* of Q, K, V, O */
    int k;       /* the kernel time_launches runs */
} Device;

static Device device_up(const AttnChapter *c, const Options *o, const AttnHost *t) {
    Device dv;
    memset(&dv, 0, sizeof(dv));
    dv.c = c;
    dv.n = t->n;
    dv.rows = t->rows;
    const size_t e = dtype_size(o->dtype); /* Q, K, V, O in the storage type */
    void *Q = dev_alloc(e * t->n), *K = dev_alloc(e * t->n), *V = dev_alloc(e * t->n);
    dev_upload(Q, t->Q, t->n, o->dtype);
    dev_upload(K, t->K, t->n, o->dtype);
    dev_upload(V, t->V, t->n, o->dtype);
    dv.dtype = o->dtype;
    AttnArgs a = {Q, K, V, dev_alloc(e * t->n), NULL, {NULL}, o->B, o->H, o->N, o->d, o->Br, o->Bc, o->causal,
                  o->dtype};
    if (!c->L_from_outputs) a.L = dev_alloc(sizeof(float) * t->rows);
    for (int x = 0; x < c->nextra; x++)
        a.extra[x] = dev_alloc(dtype_size(c->extra[x].type) * c->extra[x].elements(o->B, o->H, o->N, o->d));
    dv.args = a;
    return dv;
}

static void device_down(Device *dv) {
    dev_free((void *)dv->args.Q), dev_free((void *)dv->args.K), dev_free((void *)dv->args.V);
    dev_free(dv->args.O), dev_free(dv->args.L);
    for (int x = 0; x < dv->c->nextra; x++) dev_free(dv->args.extra[x]);
}

/* The outputs: O, L, and the chapter's buffers that are outputs (AttnHost.extra_n elements of fp32 each). */
static void device_poison(const Device *dv, const AttnHost *t) {
    dev_poison(dv->args.O, dtype_size(dv->dtype) * dv->n);
    if (dv->args.L) dev_poison(dv->args.L, sizeof(float) * dv->rows);
    for (int x = 0; x < dv->c->nextra; x++)
        if (dv->c->extra[x].output) dev_poison(dv->args.extra[x], sizeof(float) * t->extra_n[x]);
}

/* Every kernel in order on poisoned outputs: the timed build, or the instrumented one with io[k] counted. */
static void device_forward(const Device *dv, const AttnHost *t, int counted, IoBytes *io) {
    device_poison(dv, t);
    for (int k = 0; k < dv->c->nkernels; k++) {
        if (!counted) {
            dv->c->timed[k](&dv->args);
            continue;
        }
        io_counter_reset();
        dv->c->counted[k](&dv->args);
        io[k] = io_counter_read();
    }
    CUDA_CHECK(cudaDeviceSynchronize());
}

static void device_download(const Device *dv, AttnHost *t) {
    dev_download(t->O, dv->args.O, t->n, dv->dtype);
    if (dv->args.L) dev_download(t->L, dv->args.L, t->rows, DTYPE_FP32);
    for (int x = 0; x < dv->c->nextra; x++)
        if (dv->c->extra[x].output) dev_download(t->extra[x], dv->args.extra[x], t->extra_n[x], DTYPE_FP32);
    attn_host_finish(dv->c, t);
}

static void launch_one(void *ctx) {
    const Device *dv = ctx;
    dv->c->timed[dv->k](&dv->args);
}

/* The check of t's outputs on the report row of the last kernel. */
static void check_into(const AttnChapter *c, const Options *o, const AttnHost *t, KernelRun *run) {
    AttnExpected e = attn_expected(o, t->Q, t->K, t->V);
    ErrorStats err_O, err_L;
    attn_compare(&e, o, t->O, t->L, &err_O, &err_L);
    double tol_O, tol_L;
    attn_chapter_tolerances(c, o, t, &e, &tol_O, &tol_L);
    /* The report has one check per row: the worse of O and L, each judged against its own tolerance. */
    const double rel_O = error_stats_rel(&err_O), rel_L = error_stats_rel(&err_L);
    const int o_worse = isnan(rel_O) || (!isnan(rel_L) && rel_O / tol_O >= rel_L / tol_L);
    run->err = worse_of(err_O, err_L);
    run->err.sum_diff2 = o_worse ? err_O.sum_diff2 : err_L.sum_diff2;
    run->err.sum_ref2 = o_worse ? err_O.sum_ref2 : err_L.sum_ref2;
    run->err.rel = error_stats_rel(&run->err);
    run->tol = o_worse ? tol_O : tol_L;
    run->have_check = 1;
    attn_expected_free(&e);
}

void attn_run_gpu(const AttnChapter *c, const Options *o, KernelRun *runs) {
    AttnHost t = attn_host_make(c, o);
    Device dv = device_up(c, o, &t);

    /* Each kernel alone, in launch order. A kernel's repetitions start from what the previous one left (for
     * a pipeline, the outputs of a finished pass): its instructions and its memory traffic do not
     * depend on the values, and the checked forward below starts from poisoned outputs. */
    for (int k = 0; k < c->nkernels; k++) {
        dv.k = k;
        runs[k].time = time_launches(launch_one, &dv, o->warmup, o->reps, !o->no_flush);
        runs[k].have_time = 1;
    }
    if (!o->profile) { /* --profile: each kernel exactly once, what ncu should see */
        IoBytes io[MAX_KERNELS];
        device_forward(&dv, &t, 1, io);
        for (int k = 0; k < c->nkernels; k++) {
            runs[k].counted = io[k];
            runs[k].have_counted = 1;
        }
    }
    /* The checked forward pass (also the one --save writes out): poisoned outputs, the timed build, downloaded. */
    if (!o->no_check || o->save_dir) {
        device_forward(&dv, &t, 0, NULL);
        device_download(&dv, &t);
    }
    if (!o->no_check) check_into(c, o, &t, &runs[c->nkernels - 1]);
    if (o->save_dir) save_host(o, &t);
    device_down(&dv);
    attn_host_free(&t);
}

void attn_forward_gpu(const AttnChapter *c, const Options *o, AttnHost *t, int counted, IoBytes *io) {
    Device dv = device_up(c, o, t);
    device_forward(&dv, t, counted, io);
    device_download(&dv, t);
    device_down(&dv);
}

/* ---- on the CPU ------------------------------------------------------------------------------------------ */

void attn_run_cpu(const AttnChapter *c, const Options *o, KernelRun *runs) {
    AttnHost t = attn_host_make(c, o);
    IoBytes io[MAX_KERNELS];
    double ms[MAX_KERNELS];
    memset(io, 0, sizeof(io));
    memset(ms, 0, sizeof(ms));
    c->forward_cpu(o, &t, io, ms);
    attn_host_finish(c, &t);
    for (int k = 0; k < c->nkernels; k++) {
        runs[k].time.median_ms = runs[k].time.min_ms = ms[k];
        runs[k].time.reps = 1;
        runs[k].have_time = 1;
        runs[k].counted = io[k];
        runs[k].have_counted = 1;
    }
    if (!o->no_check) check_into(c, o, &t, &runs[c->nkernels - 1]);
    if (o->save_dir) save_host(o, &t);
    attn_host_free(&t);
}

