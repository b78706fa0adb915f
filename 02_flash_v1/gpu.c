/* gpu.c: chapter 02 on the GPU: inputs up, the two kernels timed, counted and checked. */
#include <stdlib.h>

#include "ch02.h"
#include "cuda_check.h"
#include "host_tensor.h"
#include "io_count.cuh"
#include "kernels.h"

size_t flash_v1_device_bytes(const Options *o) {
    const size_t rows = (size_t)o->B * o->H * o->N;
    return sizeof(float) * (4 * rows * o->d + 2 * rows); /* Q, K, V, O; l, m */
}

typedef struct {
    float *Q, *K, *V, *O, *l, *m;
    size_t n, rows;
    FlashV1Args args;
} DeviceTensors;

static DeviceTensors device_tensors(const Options *o, const float *Q, const float *K, const float *V) {
    DeviceTensors t;
    t.rows = (size_t)o->B * o->H * o->N;
    t.n = t.rows * o->d;
    t.Q = dev_alloc(sizeof(float) * t.n);
    t.K = dev_alloc(sizeof(float) * t.n);
    t.V = dev_alloc(sizeof(float) * t.n);
    t.O = dev_alloc(sizeof(float) * t.n);
    t.l = dev_alloc(sizeof(float) * t.rows);
    t.m = dev_alloc(sizeof(float) * t.rows);
    dev_upload(t.Q, Q, t.n, DTYPE_FP32);
    dev_upload(t.K, K, t.n, DTYPE_FP32);
    dev_upload(t.V, V, t.n, DTYPE_FP32);
    FlashV1Args a = {t.Q, t.K, t.V, t.O, t.l, t.m, o->B, o->H, o->N, o->d, o->Br, o->Bc};
    t.args = a;
    return t;
}

static void poison_outputs(const DeviceTensors *t) {
    dev_poison(t->O, sizeof(float) * t->n);
    dev_poison(t->l, sizeof(float) * t->rows);
    dev_poison(t->m, sizeof(float) * t->rows);
}

static void free_tensors(DeviceTensors *t) {
    dev_free(t->Q), dev_free(t->K), dev_free(t->V), dev_free(t->O), dev_free(t->l), dev_free(t->m);
}

static void launch_init(void *args) { flash_v1_init_launch(args); }
static void launch_flash_v1(void *args) { flash_v1_launch(args); }

/* Both kernels of the instrumented build, on poisoned outputs; their counted bytes into io. */
static void counted_pass(const DeviceTensors *t, IoBytes io[FV1_KERNELS]) {
    poison_outputs(t);
    io_counter_reset();
    flash_v1_init_launch_counted(&t->args);
    io[FV1_INIT] = io_counter_read();
    io_counter_reset();
    flash_v1_launch_counted(&t->args);
    io[FV1_MAIN] = io_counter_read();
}

void flash_v1_run_gpu(const Options *o, const DeviceInfo *dev, KernelRun *runs) {
    const size_t n = (size_t)o->B * o->H * o->N * o->d;
    float *Q = malloc(sizeof(float) * n), *K = malloc(sizeof(float) * n), *V = malloc(sizeof(float) * n);
    if (!Q || !K || !V) {
        fprintf(stderr, "error: out of host memory for the inputs (%zu floats per tensor)\n", n);
        exit(3);
    }
    flash_v1_inputs(o, Q, K, V);
    DeviceTensors t = device_tensors(o, Q, K, V);
    const int flush = !o->no_flush;

    /* The init alone, then flash_v1 alone. flash_v1's repetitions continue from the O, l, m the previous one
     * left (a pass over the same keys again): its instructions and its memory traffic do not depend on the
     * values, and the checked run below starts from a fresh init. */
    runs[FV1_INIT].time = time_launches(launch_init, &t.args, o->warmup, o->reps, flush);
    runs[FV1_MAIN].time = time_launches(launch_flash_v1, &t.args, o->warmup, o->reps, flush);
    runs[FV1_INIT].have_time = runs[FV1_MAIN].have_time = 1;

    if (!o->profile) {
        IoBytes io[FV1_KERNELS];
        counted_pass(&t, io);
        for (int k = 0; k < FV1_KERNELS; k++) {
            runs[k].have_counted = 1;
            runs[k].counted = io[k];
        }
    }

    if (!o->no_check) {
        poison_outputs(&t);
        flash_v1_init_launch(&t.args);
        flash_v1_launch(&t.args);
        int idx[FV1_CHECK_HEADS];
        const int count = sample_heads(o->B * o->H, FV1_CHECK_HEADS, idx);
        float *O_h = malloc(sizeof(float) * o->N * o->d), *l_h = malloc(sizeof(float) * o->N),
              *m_h = malloc(sizeof(float) * o->N);
        ErrorStats err = error_stats_empty();
        for (int s = 0; s < count; s++) {
            const size_t at = (size_t)idx[s] * o->N;
            dev_download(O_h, t.O + at * o->d, (size_t)o->N * o->d, DTYPE_FP32);
            dev_download(l_h, t.l + at, o->N, DTYPE_FP32);
            dev_download(m_h, t.m + at, o->N, DTYPE_FP32);
            flash_v1_check_head(o, Q, K, V, idx[s], O_h, l_h, m_h, &err, NULL);
        }
        runs[FV1_MAIN].have_check = 1;
        runs[FV1_MAIN].err = err;
        runs[FV1_MAIN].tol = FV1_TOL;
        free(O_h), free(l_h), free(m_h);
    }
    free_tensors(&t);
    free(Q), free(K), free(V);
}

void flash_v1_forward_gpu(const Options *o, const float *Q, const float *K, const float *V, float *O, float *l,
                          float *m, int counted, IoBytes io[FV1_KERNELS]) {
    DeviceTensors t = device_tensors(o, Q, K, V);
    if (counted) {
        counted_pass(&t, io);
    } else {
        poison_outputs(&t);
        flash_v1_init_launch(&t.args);
        flash_v1_launch(&t.args);
    }
    dev_download(O, t.O, t.n, DTYPE_FP32);
    dev_download(l, t.l, t.rows, DTYPE_FP32);
    dev_download(m, t.m, t.rows, DTYPE_FP32);
    free_tensors(&t);
}
