/* model.c: the closed forms of model.h. */
#include "model.h"

#include "tiles.h"

typedef unsigned long long u64;

static u64 elt(const Options *o) { return dtype_size(o->dtype); }
static u64 heads(const Options *o) { return (u64)o->B * o->H; }

long long qk_blocks_per_head(const Options *o) { return ceil_div(o->N, QK_BR); }
long long pv_blocks_per_head(const Options *o) { return ceil_div(o->N, PV_BR(o->d)); }

IoBytes qk_model_bytes(const Options *o) {
    const u64 e = elt(o) * heads(o), N = o->N, d = o->d, Tq = (u64)qk_blocks_per_head(o);
    return io_bytes(e * (N * d + Tq * N * d), e * N * N);
}

IoBytes softmax_model_bytes(const Options *o) {
    const u64 e = elt(o) * heads(o), N = o->N;
    return io_bytes(e * N * N, e * N * N);
}

IoBytes pv_model_bytes(const Options *o) {
    const u64 e = elt(o) * heads(o), N = o->N, d = o->d, Tp = (u64)pv_blocks_per_head(o);
    return io_bytes(e * (N * N + Tp * N * d), e * N * d);
}

IoBytes qk_ideal_bytes(const Options *o) {
    const u64 e = elt(o) * heads(o), N = o->N, d = o->d;
    return io_bytes(e * 2 * N * d, e * N * N);
}

IoBytes softmax_ideal_bytes(const Options *o) { return softmax_model_bytes(o); }

IoBytes pv_ideal_bytes(const Options *o) {
    const u64 e = elt(o) * heads(o), N = o->N, d = o->d;
    return io_bytes(e * (N * N + N * d), e * N * d);
}

unsigned long long io3kernels_bytes(const Options *o, int step) {
    const u64 e = elt(o) * heads(o), N = o->N, d = o->d;
    switch (step) {
    case SA_QK: return e * (2 * N * d + N * N);
    case SA_SOFTMAX: return e * 2 * N * N;
    default: return e * (2 * N * N + 2 * N * d);
    }
}

double gemm_flops(const Options *o) { return 2.0 * heads(o) * (double)o->N * o->N * o->d; }

double softmax_ops(const Options *o) { return 5.0 * heads(o) * (double)o->N * o->N; }

int std_attn_models(const Options *o, KernelModel *m) {
    const int cublas = o->gemm == GEMM_CUBLAS;
    const KernelModel qk = {cublas ? "qk_cublas" : "qk_gemm", gemm_flops(o), 0.0,
                            cublas ? qk_ideal_bytes(o) : qk_model_bytes(o), qk_ideal_bytes(o)};
    const KernelModel sm = {"softmax", 0.0, softmax_ops(o), softmax_model_bytes(o), softmax_ideal_bytes(o)};
    const KernelModel pv = {cublas ? "pv_cublas" : "pv_gemm", gemm_flops(o), 0.0,
                            cublas ? pv_ideal_bytes(o) : pv_model_bytes(o), pv_ideal_bytes(o)};
    m[SA_QK] = qk;
    m[SA_SOFTMAX] = sm;
    m[SA_PV] = pv;
    return SA_KERNELS;
}
