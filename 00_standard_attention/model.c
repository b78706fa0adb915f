/* model.c: the closed forms of model.h. */
#include "model.h"

#include "checked_math.h"
#include "tiles.h"

GemmBackend gemm_of(const Options *o) { return (GemmBackend)option_value(o, ch00_options, CH00_OPT_GEMM); }

typedef unsigned long long u64;

/* Every count below is in checked_math.h's checked arithmetic: exact, or the flag is raised (the size is rejected). */
static u64 heads(const Options *o) { return count_mul((u64)o->B, (u64)o->H); }
/* Bytes per element times heads: what every per-head element count is multiplied by. */
static u64 eh(const Options *o) { return count_mul(dtype_size(o->dtype), heads(o)); }
static u64 mul(u64 a, u64 b) { return count_mul(a, b); }
static u64 add(u64 a, u64 b) { return count_add(a, b); }

long long qk_blocks_per_head(const Options *o) { return ceil_div(o->N, QK_BR); }
long long pv_blocks_per_head(const Options *o) { return ceil_div(o->N, PV_BR(o->d)); }

/* N*N and N*d fit in 64 bits (N, d < 2^31); products with heads and the element size are checked. */
IoBytes qk_model_bytes(const Options *o) {
    /* ASSIGNMENT BEGIN qk-model [model]: what `make assignment CH=00` replaces with the stub below */
    /* ASSIGNMENT STUB qk-model
    // TODO: the bytes qk_gemm moves, as cpu.c counts them: Q once, K once per query block
    // (qk_blocks_per_head), S written once; eh(o) is bytes per element times heads. README: "The IO model".
    return qk_ideal_bytes(o);
    */
    const u64 e = eh(o), N = o->N, d = o->d, Tq = (u64)qk_blocks_per_head(o);
    return io_bytes(mul(e, add(N * d, mul(Tq, N * d))), mul(e, N * N));
    /* ASSIGNMENT END qk-model */
}

IoBytes softmax_model_bytes(const Options *o) {
    const u64 e = eh(o), N = o->N;
    return io_bytes(mul(e, N * N), mul(e, N * N));
}

IoBytes pv_model_bytes(const Options *o) {
    const u64 e = eh(o), N = o->N, d = o->d, Tp = (u64)pv_blocks_per_head(o);
    return io_bytes(mul(e, add(N * N, mul(Tp, N * d))), mul(e, N * d));
}

IoBytes qk_ideal_bytes(const Options *o) {
    const u64 e = eh(o), N = o->N, d = o->d;
    return io_bytes(mul(e, 2 * N * d), mul(e, N * N));
}

IoBytes softmax_ideal_bytes(const Options *o) { return softmax_model_bytes(o); }

IoBytes pv_ideal_bytes(const Options *o) {
    const u64 e = eh(o), N = o->N, d = o->d;
    return io_bytes(mul(e, add(N * N, N * d)), mul(e, N * d));
}

unsigned long long io3kernels_bytes(const Options *o, int step) {
    const u64 e = eh(o), N = o->N, d = o->d;
    switch (step) {
    case SA_QK: return mul(e, add(2 * N * d, N * N));
    case SA_SOFTMAX: return mul(e, mul(2, N * N));
    default: return mul(e, add(mul(2, N * N), 2 * N * d));
    }
}

unsigned long long gemm_flops(const Options *o) { return count_mul4(2, heads(o), (u64)o->N * o->N, (u64)o->d); }

unsigned long long softmax_ops(const Options *o) { return count_mul3(5, heads(o), (u64)o->N * o->N); }

int std_attn_models(const Options *o, KernelModel *m) {
    const int cublas = gemm_of(o) == GEMM_CUBLAS;
    const KernelModel qk = {cublas ? "qk_cublas" : "qk_gemm", gemm_flops(o), 0,
                            cublas ? qk_ideal_bytes(o) : qk_model_bytes(o), qk_ideal_bytes(o)};
    const KernelModel sm = {"softmax", 0, softmax_ops(o), softmax_model_bytes(o), softmax_ideal_bytes(o)};
    const KernelModel pv = {cublas ? "pv_cublas" : "pv_gemm", gemm_flops(o), 0,
                            cublas ? pv_ideal_bytes(o) : pv_model_bytes(o), pv_ideal_bytes(o)};
    m[SA_QK] = qk;
    m[SA_SOFTMAX] = sm;
    m[SA_PV] = pv;
    return SA_KERNELS;
}
