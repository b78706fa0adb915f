/* gpu.c: chapter 00 on the GPU: inputs up, each kernel timed alone and the three back to back (the total
 * row), each own kernel's bytes counted by its instrumented build, and S, P and O checked against float64. */
#include <stdlib.h>

#include "ch00.h"
#include "tiles.h"
#include "checked_math.h"
#include "cuda_check.h"
#include "host_tensor.h"
#include "io_tally.cuh"
#include "save.h"

size_t std_attn_device_bytes(const Options *o) { /* Q, K, V, O; S, P (checked_math.h: exact or flagged) */
    const unsigned long long N = o->N;
    return count_mul4(dtype_size(o->dtype), (unsigned long long)o->B * o->H, N, 4 * (unsigned long long)o->d + 2 * N);
}

size_t std_attn_host_bytes(const Options *o, int cpu) {
    typedef unsigned long long u64;
    const u64 heads = count_mul((u64)o->B, (u64)o->H), N = o->N, d = o->d, f = sizeof(float), g = sizeof(double);
    const u64 qkv = count_mul4(3, heads, N * d, f);
    /* the check, one head at a time: S_h, P_h and O_h (GPU run), and the float64 S, P and O */
    const u64 check = o->no_check ? 0 : (cpu ? 0 : f * (2 * N * N + N * d)) + g * (2 * N * N + N * d);
    const u64 save = o->save_dir ? f * N * (N > d ? N : d) : 0; /* --save: one head of S, P or O */
    if (!cpu) /* Q, K, V; an fp16 staging buffer for one tensor or one head's S or P */
        return count_add(count_add(qkv, o->dtype == DTYPE_FP16 ? count_mul3(2, heads, N * d) : 0),
                         2 * N * N + check + save);
    /* Q, K, V, O and S, P of every head; a row of S and a block's O_i */
    const u64 arrays = count_add(count_mul4(heads, N, 4 * d, f), count_mul4(2, heads, N * N, f));
    return count_add(arrays, count_add(f * (N + (u64)PV_BR(o->d) * d), check));
}

typedef struct {
    StdAttnArgs args;
    GemmBackend gemm;
    void *cublas; /* the handle, when gemm == GEMM_CUBLAS */
    size_t e;     /* bytes per element                   */
} Pipeline;

static Pipeline pipeline_up(const Options *o, const float *Q, const float *K, const float *V) {
    Pipeline p;
    const size_t heads = (size_t)o->B * o->H, n = heads * o->N * o->d, nn = heads * o->N * o->N;
    p.e = dtype_size(o->dtype);
    p.gemm = gemm_of(o);
    void *Q_d = dev_alloc(p.e * n), *K_d = dev_alloc(p.e * n), *V_d = dev_alloc(p.e * n);
    dev_upload(Q_d, Q, n, o->dtype);
    dev_upload(K_d, K, n, o->dtype);
    dev_upload(V_d, V, n, o->dtype);
    StdAttnArgs a = {Q_d, K_d, V_d, dev_alloc(p.e * nn), dev_alloc(p.e * nn), dev_alloc(p.e * n),
                     o->B, o->H, o->N, o->d, o->dtype == DTYPE_FP16};
    p.args = a;
    p.cublas = p.gemm == GEMM_CUBLAS ? cublas_gemms_create() : NULL;
    return p;
}

static void pipeline_down(Pipeline *p) {
    if (p->cublas) cublas_gemms_destroy(p->cublas);
    dev_free((void *)p->args.Q), dev_free((void *)p->args.K), dev_free((void *)p->args.V);
    dev_free(p->args.S), dev_free(p->args.P), dev_free(p->args.O);
}

static void poison_outputs(const Pipeline *p) {
    const StdAttnArgs *a = &p->args;
    const size_t heads = (size_t)a->B * a->H, N = a->N;
    dev_poison(a->S, p->e * heads * N * N);
    dev_poison(a->P, p->e * heads * N * N);
    dev_poison(a->O, p->e * heads * N * a->d);
}

/* Kernel k of the timed build (own kernel or cuBLAS), or of the instrumented build where there is one. */
static void launch_stage(const Pipeline *p, int k, int counted) {
    const StdAttnArgs *a = &p->args;
    if (k == SA_SOFTMAX) {
        if (counted) softmax_launch_counted(a);
        else softmax_launch(a);
    } else if (p->gemm == GEMM_CUBLAS) {
        if (k == SA_QK) qk_cublas(p->cublas, a);
        else pv_cublas(p->cublas, a);
    } else if (k == SA_QK) {
        if (counted) qk_gemm_launch_counted(a);
        else qk_gemm_launch(a);
    } else {
        if (counted) pv_gemm_launch_counted(a);
        else pv_gemm_launch(a);
    }
}

typedef struct {
    const Pipeline *p;
    int k;
} Stage;

static void time_stage(void *ctx) {
    const Stage *s = ctx;
    launch_stage(s->p, s->k, 0);
}

static void time_pipeline(void *ctx) {
    for (int k = 0; k < SA_KERNELS; k++) launch_stage(ctx, k, 0);
}

/* The three steps on poisoned outputs; with counted, each instrumented kernel's bytes into io/have_io. */
static void forward(const Pipeline *p, int counted, IoBytes io[SA_KERNELS], int have_io[SA_KERNELS]) {
    poison_outputs(p);
    for (int k = 0; k < SA_KERNELS; k++) {
        const int has_counted_build = k == SA_SOFTMAX || p->gemm == GEMM_OWN;
        if (counted && has_counted_build) io_counter_reset();
        launch_stage(p, k, counted);
        if (counted) {
            have_io[k] = has_counted_build;
            io[k] = has_counted_build ? io_counter_read() : io_bytes(0, 0);
        }
    }
    CUDA_CHECK(cudaDeviceSynchronize());
}

static const void *head_at(const void *base, size_t h, size_t elems_per_head, size_t e) {
    return (const char *)base + h * elems_per_head * e;
}

/* --save: Q, K, V as uploaded (the host inputs, rounded through half for fp16), then O, S and P (S and P where
 * the plan keeps them) downloaded head by head from the last forward pass, in the storage type. */
static void save_outputs(const Options *o, const Pipeline *p, const float *Q, const float *K, const float *V) {
    const size_t heads = (size_t)o->B * o->H, N = o->N, d = o->d;
    const SavePlan plan = chapter_save_plan(&chapter00, o);
    const char *dt = dtype_name(o->dtype);
    long long bhnd[4];
    save_shape_bhnd(o, bhnd);
    const long long bhnn[4] = {o->B, o->H, o->N, o->N};
    save_inputs(o, Q, K, V);
    const struct {
        const char *name;
        const void *dev;
        size_t per_head;
        const long long *shape;
    } out[3] = {{"O", p->args.O, N * d, bhnd}, {"S", p->args.S, N * N, bhnn}, {"P", p->args.P, N * N, bhnn}};
    float *buf = host_alloc(sizeof(float) * N * (save_plan_has(&plan, "S") && N > d ? N : d), "a head to save");
    for (int i = 0; i < 3; i++) {
        SaveFile f;
        if (!save_plan_has(&plan, out[i].name) || !save_open(&f, o, out[i].name, dt, 4, out[i].shape)) continue;
        for (size_t h = 0; h < heads; h++) {
            dev_download(buf, head_at(out[i].dev, h, out[i].per_head, p->e), out[i].per_head, o->dtype);
            if (!save_floats(&f, buf, out[i].per_head)) break;
        }
        save_close(&f);
    }
    free(buf);
}

void std_attn_run_gpu(const Options *o, const DeviceInfo *dev, KernelRun *runs) {
    const size_t heads = (size_t)o->B * o->H, N = o->N, d = o->d, n = heads * N * d;
    float *Q = host_alloc(sizeof(float) * n, "Q"), *K = host_alloc(sizeof(float) * n, "K"),
          *V = host_alloc(sizeof(float) * n, "V");
    std_attn_inputs(o, Q, K, V);
    Pipeline p = pipeline_up(o, Q, K, V);
    const int flush = !o->no_flush;

    /* Each kernel alone, in pipeline order (each one's input is then the previous one's output), then the
     * three back to back: the number to compare with a framework's three-op attention. */
    for (int k = 0; k < SA_KERNELS; k++) {
        Stage s = {&p, k};
        runs[k].time = time_launches(time_stage, &s, o->warmup, o->reps, flush);
        runs[k].have_time = 1;
    }
    if (!o->profile) { /* --profile: each kernel exactly once */
        runs[SA_KERNELS].time = time_launches(time_pipeline, &p, o->warmup, o->reps, flush);
        runs[SA_KERNELS].have_time = 1;

        IoBytes io[SA_KERNELS];
        int have_io[SA_KERNELS];
        forward(&p, 1, io, have_io);
        for (int k = 0; k < SA_KERNELS; k++) {
            runs[k].have_counted = have_io[k];
            runs[k].counted = io[k];
        }
    }

    if (!o->no_check) {
        forward(&p, 0, NULL, NULL);
        int idx[8];
        const int count = std_attn_check_heads(o, idx);
        float *S_h = host_alloc(sizeof(float) * N * N, "a head of S"), *P_h = host_alloc(sizeof(float) * N * N, "a head of P"),
              *O_h = host_alloc(sizeof(float) * N * d, "a head of O");
        ErrorStats err[SA_KERNELS] = {error_stats_empty(), error_stats_empty(), error_stats_empty()};
        for (int s = 0; s < count; s++) {
            const size_t h = idx[s];
            dev_download(S_h, head_at(p.args.S, h, N * N, p.e), N * N, o->dtype);
            dev_download(P_h, head_at(p.args.P, h, N * N, p.e), N * N, o->dtype);
            dev_download(O_h, head_at(p.args.O, h, N * d, p.e), N * d, o->dtype);
            std_attn_check_head(o, Q, K, V, idx[s], S_h, P_h, O_h, err);
        }
        std_attn_set_checks(o, err, runs);
        free(S_h), free(P_h), free(O_h);
    }
    if (o->save_dir) { /* the checked forward pass's outputs, or one forward pass where nothing was checked */
        if (o->no_check) forward(&p, 0, NULL, NULL);
        save_outputs(o, &p, Q, K, V);
    }
    pipeline_down(&p);
    free(Q), free(K), free(V);
}

void std_attn_forward_gpu(const Options *o, const float *Q, const float *K, const float *V, float *S, float *P,
                          float *O, int counted, IoBytes io[SA_KERNELS], int have_io[SA_KERNELS]) {
    const size_t heads = (size_t)o->B * o->H, N = o->N;
    Pipeline p = pipeline_up(o, Q, K, V);
    forward(&p, counted, io, have_io);
    dev_download(S, p.args.S, heads * N * N, o->dtype);
    dev_download(P, p.args.P, heads * N * N, o->dtype);
    dev_download(O, p.args.O, heads * N * o->d, o->dtype);
    pipeline_down(&p);
}
