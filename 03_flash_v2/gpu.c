/* gpu.c: chapter 03 on the GPU: inputs up, the kernel counted, timed and checked. */
#include <stdlib.h>

#include "ch03.h"
#include "cuda_check.h"
#include "host_tensor.h"
#include "io_count.cuh"
#include "kernels.h"

size_t flash_v2_device_bytes(const Options *o) {
    const size_t rows = (size_t)o->B * o->H * o->N;
    return sizeof(float) * (4 * rows * o->d + rows); /* Q, K, V, O; L. O(N d): no N x N array anywhere */
}

typedef struct {
    float *Q, *K, *V, *O, *L;
    size_t n, rows;
    FlashV2Args args;
} DeviceTensors;

static DeviceTensors device_tensors(const Options *o, const float *Q, const float *K, const float *V) {
    DeviceTensors t;
    t.rows = (size_t)o->B * o->H * o->N;
    t.n = t.rows * o->d;
    t.Q = dev_alloc(sizeof(float) * t.n);
    t.K = dev_alloc(sizeof(float) * t.n);
    t.V = dev_alloc(sizeof(float) * t.n);
    t.O = dev_alloc(sizeof(float) * t.n);
    t.L = dev_alloc(sizeof(float) * t.rows);
    dev_upload(t.Q, Q, t.n, DTYPE_FP32);
    dev_upload(t.K, K, t.n, DTYPE_FP32);
    dev_upload(t.V, V, t.n, DTYPE_FP32);
    FlashV2Args a = {t.Q, t.K, t.V, t.O, t.L, o->B, o->H, o->N, o->d, o->Br, o->Bc, o->causal};
    t.args = a;
    return t;
}

static void poison_outputs(const DeviceTensors *t) {
    dev_poison(t->O, sizeof(float) * t->n);
    dev_poison(t->L, sizeof(float) * t->rows);
}

static void free_tensors(DeviceTensors *t) {
    dev_free(t->Q), dev_free(t->K), dev_free(t->V), dev_free(t->O), dev_free(t->L);
}

static void launch_flash_v2(void *args) { flash_v2_launch(args); }

/* The instrumented build once, on poisoned outputs. */
static IoBytes counted_pass(const DeviceTensors *t) {
    poison_outputs(t);
    io_counter_reset();
    flash_v2_launch_counted(&t->args);
    return io_counter_read();
}

void flash_v2_run_gpu(const Options *o, const DeviceInfo *dev, KernelRun *runs) {
    (void)dev;
    const size_t n = (size_t)o->B * o->H * o->N * o->d;
    float *Q = malloc(sizeof(float) * n), *K = malloc(sizeof(float) * n), *V = malloc(sizeof(float) * n);
    if (!Q || !K || !V) {
        fprintf(stderr, "error: out of host memory for the inputs (%zu floats per tensor)\n", n);
        exit(3);
    }
    flash_v2_inputs(o, Q, K, V);
    DeviceTensors t = device_tensors(o, Q, K, V);
    KernelRun *run = &runs[0];

    /* Every repetition writes the same O and L from the same inputs; the last one is checked below. */
    poison_outputs(&t);
    run->time = time_launches(launch_flash_v2, &t.args, o->warmup, o->reps, !o->no_flush);
    run->have_time = 1;

    if (!o->no_check) {
        float *O = malloc(sizeof(float) * t.n), *L = malloc(sizeof(float) * t.rows);
        if (!O || !L) {
            fprintf(stderr, "error: out of host memory for the outputs (%zu floats)\n", t.n + t.rows);
            exit(3);
        }
        dev_download(O, t.O, t.n, DTYPE_FP32);
        dev_download(L, t.L, t.rows, DTYPE_FP32);
        Expected e = expected_make(o, Q, K, V);
        ErrorStats err_O, err_L;
        expected_compare(&e, o, O, L, &err_O, &err_L);
        run->err = worse_of(err_O, err_L);
        run->tol = flash_v2_tolerance(o);
        run->have_check = 1;
        expected_free(&e);
        free(O), free(L);
    }

    if (!o->profile) {
        run->counted = counted_pass(&t);
        run->have_counted = 1;
    }
    free_tensors(&t);
    free(Q), free(K), free(V);
}

void flash_v2_forward_gpu(const Options *o, const float *Q, const float *K, const float *V, float *O, float *L,
                          int counted, IoBytes *io) {
    DeviceTensors t = device_tensors(o, Q, K, V);
    if (counted) {
        *io = counted_pass(&t);
    } else {
        poison_outputs(&t);
        flash_v2_launch(&t.args);
    }
    dev_download(O, t.O, t.n, DTYPE_FP32);
    dev_download(L, t.L, t.rows, DTYPE_FP32);
    free_tensors(&t);
}
