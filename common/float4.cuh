/* float4.cuh: small helpers of the fp32 kernels that move floats four at a time: a float4 view of shared memory, a
 * float4's component, a 4-term dot product, p times a float4 added to another, and 1, 2 or 4 consecutive floats in
 * one load. */
#ifndef FA_FLOAT4_CUH
#define FA_FLOAT4_CUH

static __device__ __forceinline__ float4 &f4(float *p) { return *reinterpret_cast<float4 *>(p); }

static __device__ __forceinline__ float component(const float4 &v, int e) {
    return e == 0 ? v.x : e == 1 ? v.y : e == 2 ? v.z : v.w;
}

/* acc + a.b, four FMAs */
static __device__ __forceinline__ float dot4_add(const float4 &a, const float4 &b, float acc) {
    acc = fmaf(a.x, b.x, acc);
    acc = fmaf(a.y, b.y, acc);
    acc = fmaf(a.z, b.z, acc);
    return fmaf(a.w, b.w, acc);
}

/* acc + p * v, four FMAs */
static __device__ __forceinline__ void axpy4(float p, const float4 &v, float4 &acc) {
    acc.x = fmaf(p, v.x, acc.x);
    acc.y = fmaf(p, v.y, acc.y);
    acc.z = fmaf(p, v.z, acc.z);
    acc.w = fmaf(p, v.w, acc.w);
}

/* W = 1, 2 or 4 consecutive floats of shared memory at p (aligned to 4 W bytes) into v: one load instruction. */
template <int W>
static __device__ __forceinline__ void load_vec(float (&v)[W], const float *p) {
    if constexpr (W == 4) {
        const float4 t = *reinterpret_cast<const float4 *>(p);
        v[0] = t.x, v[1] = t.y, v[2] = t.z, v[3] = t.w;
    } else if constexpr (W == 2) {
        const float2 t = *reinterpret_cast<const float2 *>(p);
        v[0] = t.x, v[1] = t.y;
    } else {
        v[0] = *p;
    }
}

#endif
