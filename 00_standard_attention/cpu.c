/* cpu.c: chapter 00's three kernels on host arrays that stand in for HBM, with the kernels' blocking. Bytes
 * are counted where the kernels load and store: qk_gemm loads its query panel Q_i once and every key tile
 * K_j per panel, and stores each S_ij; the softmax loads a row of S and stores a row of P; pv_gemm loads the
 * chunks of its rows P_i and of V, and stores O_i once. As in the kernels, only the real rows and keys of
 * a ragged tile move. With fp16 every stored value is rounded to half, as the device stores it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ch00.h"
#include "attention.h"
#include "host_tensor.h"
#include "progress.h"
#include "save.h"
#include "tiles.h"

void std_attn_inputs(const Options *o, float *Q, float *K, float *V) {
    const size_t n = (size_t)o->B * o->H * o->N * o->d;
    attn_inputs(o, Q, K, V);
    if (o->dtype == DTYPE_FP16) {
        round_through_half(Q, n);
        round_through_half(K, n);
        round_through_half(V, n);
    }
}

float std_attn_stored(float x, DType t) { return t == DTYPE_FP16 ? half_to_float(half_from_float(x)) : x; }

static int min_int(int a, int b) { return a < b ? a : b; }

void qk_gemm_cpu(const float *Q, const float *K, float *S, int N, int d, DType t, IoBytes *io) {
    const unsigned long long e = dtype_size(t);
    const float scale = 1.0f / sqrtf((float)d);
    for (int q0 = 0; q0 < N; q0 += QK_BR) { /* one block of the grid */
        const int rows = min_int(QK_BR, N - q0);
        io->read += e * rows * d; /* Q_i, once */
        for (int k0 = 0; k0 < N; k0 += QK_BC) {
            const int keys = min_int(QK_BC, N - k0);
            io->read += e * keys * d; /* K_j, in d / QK_BK chunks of QK_BK features */
            for (int r = 0; r < rows; r++)
                for (int c = 0; c < keys; c++) {
                    const float *q = Q + (size_t)(q0 + r) * d, *k = K + (size_t)(k0 + c) * d;
                    float acc = 0.f;
                    for (int x = 0; x < d; x++) acc += q[x] * k[x];
                    S[(size_t)(q0 + r) * N + k0 + c] = std_attn_stored(scale * acc, t);
                }
            io->write += e * rows * keys; /* S_ij */
        }
    }
}

void softmax_cpu(const float *S, float *P, long long rows, int N, DType t, IoBytes *io) {
    const unsigned long long e = dtype_size(t);
    float *row = host_alloc(sizeof(float) * N, "a row of S");
    for (long long r = 0; r < rows; r++) {
        const float *s = S + (size_t)r * N;
        float *p = P + (size_t)r * N;
        memcpy(row, s, sizeof(float) * N); /* the row on chip */
        io->read += e * N;
        /* ASSIGNMENT BEGIN softmax-row [cpu]: what `make assignment CH=00` replaces with the stub below */
        /* ASSIGNMENT STUB softmax-row
        // TODO: write the softmax of the row into p: the row maximum m, l = sum of exp(row[c] - m), then
        // p[c] = exp(row[c] - m) / l, each stored with std_attn_stored(..., t). README: "The three kernels".
        for (int c = 0; c < N; c++) p[c] = std_attn_stored(1.f / N, t);
        */
        float m = -INFINITY;
        for (int c = 0; c < N; c++) m = fmaxf(m, row[c]);
        float l = 0.f;
        for (int c = 0; c < N; c++) l += (row[c] = expf(row[c] - m));
        const float inv_l = 1.f / l;
        for (int c = 0; c < N; c++) p[c] = std_attn_stored(row[c] * inv_l, t);
        /* ASSIGNMENT END softmax-row */
        io->write += e * N;
    }
    free(row);
}

void pv_gemm_cpu(const float *P, const float *V, float *O, int N, int d, DType t, IoBytes *io) {
    const unsigned long long e = dtype_size(t);
    const int Br = PV_BR(d), Bc = PV_BC(d);
    float *O_i = host_alloc(sizeof(float) * Br * d, "O_i"); /* the block's accumulators */
    for (int q0 = 0; q0 < N; q0 += Br) {         /* one block of the grid */
        const int rows = min_int(Br, N - q0);
        memset(O_i, 0, sizeof(float) * Br * d);
        for (int k0 = 0; k0 < N; k0 += Bc) {
            const int keys = min_int(Bc, N - k0);
            io->read += e * ((unsigned long long)rows * keys + (unsigned long long)keys * d); /* P_i and V chunks */
            for (int r = 0; r < rows; r++)
                for (int c = 0; c < keys; c++) {
                    const float p = P[(size_t)(q0 + r) * N + k0 + c];
                    const float *v = V + (size_t)(k0 + c) * d;
                    for (int x = 0; x < d; x++) O_i[r * d + x] += p * v[x];
                }
        }
        for (int r = 0; r < rows; r++)
            for (int x = 0; x < d; x++) O[(size_t)(q0 + r) * d + x] = std_attn_stored(O_i[r * d + x], t);
        io->write += e * rows * d; /* O_i, once */
    }
    free(O_i);
}

void std_attn_forward_cpu(const Options *o, const float *Q, const float *K, const float *V, float *S, float *P,
                          float *O, IoBytes io[SA_KERNELS], double *ms) {
    const size_t heads = (size_t)o->B * o->H, N = o->N, d = o->d;
    for (int k = 0; k < SA_KERNELS; k++) io[k] = io_bytes(0, 0);
    Progress p; /* in heads: a third of the work for each of the three steps */
    progress_begin(&p, "the three steps on the CPU");
    const double t0 = wall_ms();
    for (size_t h = 0; h < heads; h++) {
        qk_gemm_cpu(Q + h * N * d, K + h * N * d, S + h * N * N, o->N, o->d, o->dtype, &io[SA_QK]);
        progress_update(&p, (double)(h + 1), 3.0 * heads);
    }
    const double t1 = wall_ms();
    for (size_t h = 0; h < heads; h++) {
        softmax_cpu(S + h * N * N, P + h * N * N, (long long)N, o->N, o->dtype, &io[SA_SOFTMAX]);
        progress_update(&p, (double)(heads + h + 1), 3.0 * heads);
    }
    const double t2 = wall_ms();
    for (size_t h = 0; h < heads; h++) {
        pv_gemm_cpu(P + h * N * N, V + h * N * d, O + h * N * d, o->N, o->d, o->dtype, &io[SA_PV]);
        progress_update(&p, (double)(2 * heads + h + 1), 3.0 * heads);
    }
    const double t3 = wall_ms();
    progress_end(&p);
    if (ms) {
        ms[SA_QK] = t1 - t0;
        ms[SA_SOFTMAX] = t2 - t1;
        ms[SA_PV] = t3 - t2;
    }
}

void std_attn_run_cpu(const Options *o, KernelRun *runs) {
    const size_t heads = (size_t)o->B * o->H, n = heads * o->N * o->d, nn = heads * o->N * o->N;
    float *Q = host_alloc(sizeof(float) * n, "Q"), *K = host_alloc(sizeof(float) * n, "K"),
          *V = host_alloc(sizeof(float) * n, "V"), *O = host_alloc(sizeof(float) * n, "O");
    float *S = host_alloc(sizeof(float) * nn, "S"), *P = host_alloc(sizeof(float) * nn, "P");
    std_attn_inputs(o, Q, K, V);

    IoBytes io[SA_KERNELS];
    double ms[SA_KERNELS];
    std_attn_forward_cpu(o, Q, K, V, S, P, O, io, ms);
    /* There is no cuBLAS on the CPU: with --gemm cublas the GEMM rows still run this chapter's blocking, whose
     * bytes are not what those rows model (the compulsory bytes), so they are not reported as counted. */
    if (gemm_of(o) == GEMM_CUBLAS)
        fprintf(stderr, "note: the CPU version has no cuBLAS; qk_cublas and pv_cublas ran this chapter's own blocking\n");
    for (int k = 0; k < SA_KERNELS; k++) {
        runs[k].have_time = 1;
        runs[k].time.median_ms = runs[k].time.min_ms = ms[k];
        runs[k].time.reps = 1;
        runs[k].have_counted = k == SA_SOFTMAX || gemm_of(o) == GEMM_OWN;
        runs[k].counted = io[k];
    }

    if (!o->no_check) {
        int idx[8];
        const int count = std_attn_check_heads(o, idx);
        ErrorStats err[SA_KERNELS] = {error_stats_empty(), error_stats_empty(), error_stats_empty()};
        for (int s = 0; s < count; s++) {
            const size_t h = idx[s];
            std_attn_check_head(o, Q, K, V, idx[s], S + h * o->N * o->N, P + h * o->N * o->N, O + h * o->N * o->d, err);
        }
        std_attn_set_checks(o, err, runs);
    }
    if (o->save_dir) { /* --save: the arrays as the CPU version left them (S and P where the plan keeps them) */
        const SavePlan plan = chapter_save_plan(&chapter00, o);
        const char *dt = dtype_name(o->dtype);
        long long bhnd[4];
        save_shape_bhnd(o, bhnd);
        const long long bhnn[4] = {o->B, o->H, o->N, o->N};
        save_inputs(o, Q, K, V);
        save_array(o, "O", dt, 4, bhnd, O);
        if (save_plan_has(&plan, "S")) save_array(o, "S", dt, 4, bhnn, S);
        if (save_plan_has(&plan, "P")) save_array(o, "P", dt, 4, bhnn, P);
    }
    free(Q), free(K), free(V), free(O), free(S), free(P);
}
