// ceilings.cu: the roofline ceilings, measured on the GPU at hand rather than read from a datasheet.
//   HBM: a 1 GiB -> 1 GiB copy, the faster of a kernel with 16-byte accesses and cudaMemcpy;
//        bandwidth = (bytes read + bytes written) / time.
//   FP32: independent FFMA chains in every thread of a full grid; 2 FLOP per FMA.
//   mma.sync: independent chains of the warp-level tensor-core instruction (fp16 inputs, fp32
//        accumulators; m16n8k16 from sm_80, m16n8k8 on sm_75) in every warp of a full grid; 2 FLOP per
//        multiply-add. What that instruction can reach, which on Hopper is less than the datasheet's
//        tensor-core peak (that needs the asynchronous warpgroup instruction, wgmma).
// All report the median of 20 timed runs after at least 300 ms of warm-up: an idle GPU starts at a low
// clock (an H200 idles at ~500 MHz) and takes a while to reach its boost clock; without the warm-up the
// first measurement of the copy came out at 281 GB/s instead of ~4 TB/s.
#include "cuda_check.h"
#include "device.h"
#include "timing.h"

// Each thread has COPY_UNROLL independent 16-byte loads in flight before its first store: a memory system
// as deep as HBM3e needs many bytes in flight per SM to reach its bandwidth.
constexpr int COPY_UNROLL = 4;

__global__ void copy_kernel(const float4 *__restrict__ src, float4 *__restrict__ dst, size_t n) {
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    for (; i + (COPY_UNROLL - 1) * stride < n; i += COPY_UNROLL * stride) {
        float4 v[COPY_UNROLL];
#pragma unroll
        for (int u = 0; u < COPY_UNROLL; u++) v[u] = src[i + u * stride];
#pragma unroll
        for (int u = 0; u < COPY_UNROLL; u++) dst[i + u * stride] = v[u];
    }
    for (; i < n; i += stride) dst[i] = src[i];
}

constexpr int FMA_CHAINS = 8;   // independent accumulators per thread: hides the FMA latency
constexpr int FMA_ITERS = 4096; // iterations of the chain loop

__global__ void ffma_kernel(float *out, float a, float b) {
    float acc[FMA_CHAINS];
#pragma unroll
    for (int c = 0; c < FMA_CHAINS; c++) acc[c] = threadIdx.x * 1e-3f + c;
    for (int it = 0; it < FMA_ITERS; it++) {
#pragma unroll
        for (int c = 0; c < FMA_CHAINS; c++) acc[c] = fmaf(acc[c], a, b);
    }
    float sum = 0.f;
#pragma unroll
    for (int c = 0; c < FMA_CHAINS; c++) sum += acc[c];
    if (sum == 12345.678f) out[0] = sum; // keeps the chains alive; never true for the inputs used
}

constexpr int MMA_CHAINS = 8;   // independent accumulator tiles per warp: hides the mma latency
constexpr int MMA_ITERS = 2048; // iterations of the chain loop
constexpr int MMA_WARPS = 8;    // warps per block

// One mma of a warp: D (16x8, fp32) += A (16xK, fp16) B (Kx8, fp16), 16 * 8 * K multiply-adds; K = 16 from
// sm_80, 8 on sm_75.

__device__ __forceinline__ void mma_f16(float d[4], const unsigned a[4], const unsigned b[2]) {
#if __CUDA_ARCH__ >= 800
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                 "{%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#elif __CUDA_ARCH__ >= 750
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5}, {%6}, "
                 "{%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(b[0]));
#endif
}

__global__ void mma_kernel(float *out, unsigned seed) {
    const unsigned a[4] = {seed ^ threadIdx.x, seed + 1, seed + 2, seed + 3}; /* fp16 pairs; values do not matter */
    const unsigned b[2] = {seed * 3, seed * 5};
    float acc[MMA_CHAINS][4] = {};
    for (int it = 0; it < MMA_ITERS; it++) {
#pragma unroll
        for (int c = 0; c < MMA_CHAINS; c++) mma_f16(acc[c], a, b);
    }
    float sum = 0.f;
#pragma unroll
    for (int c = 0; c < MMA_CHAINS; c++) sum += acc[c][0] + acc[c][1] + acc[c][2] + acc[c][3];
    if (sum == 12345.678f) out[0] = sum; // keeps the chains alive; never true for the inputs used
}

// Repeats fn until it has run for at least `ms` milliseconds of wall time.
static void warm_up(LaunchFn fn, void *args, double ms) {
    const double start = wall_ms();
    do {
        for (int i = 0; i < 10; i++) fn(args);
        CUDA_CHECK(cudaDeviceSynchronize());
    } while (wall_ms() - start < ms);
}

struct CopyArgs {
    const float4 *src;
    float4 *dst;
    size_t n;
    int blocks;
};
static void launch_copy(void *p) {
    CopyArgs *a = (CopyArgs *)p;
    copy_kernel<<<a->blocks, 512>>>(a->src, a->dst, a->n);
    KERNEL_CHECK();
}

struct FmaArgs {
    float *out;
    int blocks;
};
static void launch_ffma(void *p) {
    FmaArgs *a = (FmaArgs *)p;
    ffma_kernel<<<a->blocks, 256>>>(a->out, 0.999999f, 1e-7f);
    KERNEL_CHECK();
}

struct MmaArgs {
    float *out;
    int blocks;
};
static void launch_mma(void *p) {
    MmaArgs *a = (MmaArgs *)p;
    mma_kernel<<<a->blocks, MMA_WARPS * 32>>>(a->out, 0x3c003c00u);
    KERNEL_CHECK();
}

struct MemcpyArgs {
    const void *src;
    void *dst;
    size_t bytes;
};
static void launch_memcpy(void *p) {
    MemcpyArgs *a = (MemcpyArgs *)p;
    CUDA_CHECK(cudaMemcpyAsync(a->dst, a->src, a->bytes, cudaMemcpyDeviceToDevice, 0));
}

// The better of two copies of 1 GiB: our kernel and the driver's cudaMemcpy. A ceiling that some kernel of
// the book beats would not be a ceiling (on an H200 the driver's copy was the faster one).
extern "C" double measure_copy_gbs(void) {
    const size_t bytes = (size_t)1 << 30;
    float4 *src, *dst;
    CUDA_CHECK(cudaMalloc(&src, bytes));
    CUDA_CHECK(cudaMalloc(&dst, bytes));
    CUDA_CHECK(cudaMemset(src, 0x3c, bytes));
    int dev = 0, sms = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CopyArgs a = {src, dst, bytes / sizeof(float4), sms * 4}; /* 2048 resident threads per SM */
    warm_up(launch_copy, &a, 300.0);
    Timing t = time_launches(launch_copy, &a, 3, 20, 0);
    MemcpyArgs m = {src, dst, bytes};
    Timing t_memcpy = time_launches(launch_memcpy, &m, 3, 20, 0);
    CUDA_CHECK(cudaFree(src));
    CUDA_CHECK(cudaFree(dst));
    const double best_ms = t.median_ms < t_memcpy.median_ms ? t.median_ms : t_memcpy.median_ms;
    return 2.0 * bytes / (best_ms * 1e-3) / 1e9;
}

extern "C" double measure_fp32_tflops(int sms) {
    float *out;
    CUDA_CHECK(cudaMalloc(&out, sizeof(float)));
    FmaArgs a = {out, sms * 16};
    warm_up(launch_ffma, &a, 300.0);
    Timing t = time_launches(launch_ffma, &a, 3, 20, 0);
    CUDA_CHECK(cudaFree(out));
    const double flops = 2.0 * FMA_CHAINS * FMA_ITERS * 256.0 * a.blocks;
    return flops / (t.median_ms * 1e-3) / 1e12;
}

extern "C" double measure_mma_tflops(int sms, int cc_major, int cc_minor) {
    if (cc_major * 10 + cc_minor < 75) return 0.0; /* no mma.sync with fp16 inputs before sm_75 */
    const int k = cc_major >= 8 ? 16 : 8;          /* mma_f16's K on this GPU */
    float *out;
    CUDA_CHECK(cudaMalloc(&out, sizeof(float)));
    MmaArgs a = {out, sms * 8};
    warm_up(launch_mma, &a, 300.0);
    Timing t = time_launches(launch_mma, &a, 3, 20, 0);
    CUDA_CHECK(cudaFree(out));
    const double flops = 2.0 * 16 * 8 * k * MMA_CHAINS * MMA_ITERS * (double)MMA_WARPS * a.blocks;
    return flops / (t.median_ms * 1e-3) / 1e12;
}
