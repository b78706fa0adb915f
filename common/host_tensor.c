/* host_tensor.c: random inputs, IEEE half on the host, device buffers with checked allocation. */
#include "host_tensor.h"

#include <math.h>
#include <string.h>
#include <unistd.h>

#include "cuda_check.h"
#include "threads.h"

/* ---- large element-wise loops on several threads ---------------------------------------------------------
 * The inputs of a GPU run are hundreds of millions of numbers (2.7 GB of scores at the largest); drawn and rounded
 * on one core they took seconds of every run, more than the GPU work. Each element depends on its index alone
 * (the generator below is a counter: the k-th number from a state is a function of state + k * step), so the
 * loops split into contiguous chunks, one thread each, and write exactly what one pass would. */
#define SPLITMIX_STEP 0x9E3779B97F4A7C15ull
#define PAR_MIN_ELEMENTS ((size_t)1 << 22) /* below: one thread (starting threads costs more than it saves) */
#define PAR_MAX_THREADS 32

enum { DO_ROUND, DO_FILL, DO_TO16, DO_FROM16 };
typedef struct {
    float *x;
    uint16_t *h; /* DO_TO16, DO_FROM16: the 16-bit side */
    size_t n;
    unsigned long long state; /* DO_FILL: the generator's state before the chunk's first number */
    float lo, hi;
    DType t;
    int what; /* DO_ROUND: round_to_storage; DO_FILL: fill_uniform; DO_TO16, DO_FROM16: dev_upload's, dev_download's conversion */
} Chunk;

static void fill_uniform_serial(float *x, size_t n, Rng *r, float lo, float hi);
static void round_serial(float *x, size_t n, DType t);

static void *chunk_run(void *arg) {
    Chunk *c = arg;
    Rng r = {c->state};
    switch (c->what) {
    case DO_FILL: fill_uniform_serial(c->x, c->n, &r, c->lo, c->hi); break;
    case DO_ROUND: round_serial(c->x, c->n, c->t); break;
    case DO_TO16:
        for (size_t i = 0; i < c->n; i++)
            c->h[i] = c->t == DTYPE_BF16 ? bf16_from_float(c->x[i]) : half_from_float(c->x[i]);
        break;
    case DO_FROM16:
        for (size_t i = 0; i < c->n; i++) c->x[i] = c->t == DTYPE_BF16 ? bf16_to_float(c->h[i]) : half_to_float(c->h[i]);
        break;
    }
    return NULL;
}

static int threads_for(size_t n) {
    if (n < PAR_MIN_ELEMENTS) return 1;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 1) return 1;
    return cpus > PAR_MAX_THREADS ? PAR_MAX_THREADS : (int)cpus;
}

/* Runs the chunks of c[0..k) on threads (threads.h): the result never depends on how many threads ran. */
static void run_chunks(Chunk *c, int k) { run_on_threads(chunk_run, c, sizeof *c, k); }

/* k chunks of [0, n) in order: chunk j starts at n j / k */
static int split(Chunk *c, int what, float *x, uint16_t *h, size_t n, unsigned long long state, float lo, float hi,
                 DType t) {
    const int k = threads_for(n);
    for (int j = 0; j < k; j++) {
        const size_t a = n * (size_t)j / (size_t)k, b = n * (size_t)(j + 1) / (size_t)k;
        const Chunk cj = {x + a, h ? h + a : NULL, b - a, state + (unsigned long long)a * SPLITMIX_STEP, lo, hi, t, what};
        c[j] = cj;
    }
    return k;
}

Rng rng_seeded(unsigned long long seed) {
    Rng r = {seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull};
    return r;
}

static unsigned long long splitmix64(Rng *r) {
    unsigned long long z = (r->state += SPLITMIX_STEP);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

double rng_uniform(Rng *r) { return (double)(splitmix64(r) >> 11) * (1.0 / 9007199254740992.0); }

double rng_normal(Rng *r) {
    double u1 = rng_uniform(r), u2 = rng_uniform(r);
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

static void fill_uniform_serial(float *x, size_t n, Rng *r, float lo, float hi) {
    for (size_t i = 0; i < n; i++) x[i] = (float)(lo + (hi - lo) * rng_uniform(r));
}

void fill_uniform(float *x, size_t n, Rng *r, float lo, float hi) {
    Chunk c[PAR_MAX_THREADS];
    run_chunks(c, split(c, DO_FILL, x, NULL, n, r->state, lo, hi, DTYPE_FP32));
    r->state += (unsigned long long)n * SPLITMIX_STEP; /* where one pass of n numbers leaves the generator */
}

void fill_normal(float *x, size_t n, Rng *r, float stddev) {
    for (size_t i = 0; i < n; i++) x[i] = (float)(stddev * rng_normal(r));
}

uint16_t half_from_float(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t exp = (x >> 23) & 0xFFu;
    uint32_t mant = x & 0x7FFFFFu;
    if (exp == 0xFF) return (uint16_t)(sign | 0x7C00u | (mant ? 0x200u : 0)); /* inf, NaN */
    int e = (int)exp - 127 + 15;
    if (e >= 31) return (uint16_t)(sign | 0x7C00u); /* overflow to inf */
    if (e <= 0) {                                    /* subnormal half, or zero */
        if (e < -10) return (uint16_t)sign;
        mant |= 0x800000u;
        int shift = 14 - e;
        uint32_t h = mant >> shift;
        uint32_t rem = mant & ((1u << shift) - 1), halfway = 1u << (shift - 1);
        if (rem > halfway || (rem == halfway && (h & 1))) h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = ((uint32_t)e << 10) | (mant >> 13);
    uint32_t rem = mant & 0x1FFFu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) h++; /* may carry into the exponent: correct */
    return (uint16_t)(sign | h);
}

float half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1Fu;
    uint32_t mant = h & 0x3FFu;
    uint32_t x;
    if (exp == 0) {
        if (mant == 0) x = sign;
        else { /* subnormal: normalise */
            int e = -1;
            do { mant <<= 1; e++; } while (!(mant & 0x400u));
            x = sign | ((uint32_t)(127 - 15 - e) << 23) | ((mant & 0x3FFu) << 13);
        }
    } else if (exp == 31) x = sign | 0x7F800000u | (mant << 13);
    else x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
    float f;
    memcpy(&f, &x, 4);
    return f;
}

uint16_t bf16_from_float(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7F800000u) == 0x7F800000u && (x & 0x7FFFFFu)) return (uint16_t)((x >> 16) | 0x40u); /* NaN */
    x += 0x7FFFu + ((x >> 16) & 1u); /* round to nearest, ties to even */
    return (uint16_t)(x >> 16);
}

float bf16_to_float(uint16_t h) {
    const uint32_t x = (uint32_t)h << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

float stored_value(float x, DType t) {
    return t == DTYPE_FP16 ? half_to_float(half_from_float(x)) : t == DTYPE_BF16 ? bf16_to_float(bf16_from_float(x)) : x;
}

static void round_serial(float *x, size_t n, DType t) {
    for (size_t i = 0; i < n; i++) x[i] = stored_value(x[i], t);
}

void round_to_storage(float *x, size_t n, DType t) {
    if (t == DTYPE_FP32) return;
    Chunk c[PAR_MAX_THREADS];
    run_chunks(c, split(c, DO_ROUND, x, NULL, n, 0, 0.f, 0.f, t));
}

void round_through_half(float *x, size_t n) {
    for (size_t i = 0; i < n; i++) x[i] = half_to_float(half_from_float(x[i]));
}

size_t host_available_bytes(void) {
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f) return 0;
    char line[256];
    unsigned long long kb = 0;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) break;
    fclose(f);
    return (size_t)kb * 1024;
}

void *host_alloc(size_t bytes, const char *what) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "error: out of host memory: %s needs %zu bytes (%.2f GB), %zu bytes are available; make "
                        "the problem smaller\n", what, bytes, bytes / 1e9, host_available_bytes());
        exit(2);
    }
    return p;
}

void *dev_alloc(size_t bytes) {
    void *p = NULL;
    cudaError_t err = cudaMalloc(&p, bytes ? bytes : 1);
    if (err != cudaSuccess) {
        size_t free_b = 0, total_b = 0;
        cudaMemGetInfo(&free_b, &total_b);
        fprintf(stderr, "error: cudaMalloc of %zu bytes failed (%s); %zu bytes free of %zu\n", bytes,
                cudaGetErrorString(err), free_b, total_b);
        exit(3);
    }
    return p;
}

void dev_free(void *p) {
    if (p) CUDA_CHECK(cudaFree(p));
}

void dev_upload(void *dst, const float *src, size_t n, DType t) {
    if (t == DTYPE_FP32) {
        CUDA_CHECK(cudaMemcpy(dst, src, n * sizeof(float), cudaMemcpyHostToDevice));
        return;
    }
    uint16_t *tmp = host_alloc(n * sizeof(uint16_t), "a 16-bit staging buffer");
    Chunk c[PAR_MAX_THREADS];
    run_chunks(c, split(c, DO_TO16, (float *)src, tmp, n, 0, 0.f, 0.f, t)); /* src is only read */
    CUDA_CHECK(cudaMemcpy(dst, tmp, n * sizeof(uint16_t), cudaMemcpyHostToDevice));
    free(tmp);
}

void dev_download(float *dst, const void *src, size_t n, DType t) {
    if (t == DTYPE_FP32) {
        CUDA_CHECK(cudaMemcpy(dst, src, n * sizeof(float), cudaMemcpyDeviceToHost));
        return;
    }
    uint16_t *tmp = host_alloc(n * sizeof(uint16_t), "a 16-bit staging buffer");
    CUDA_CHECK(cudaMemcpy(tmp, src, n * sizeof(uint16_t), cudaMemcpyDeviceToHost));
    Chunk c[PAR_MAX_THREADS];
    run_chunks(c, split(c, DO_FROM16, dst, tmp, n, 0, 0.f, 0.f, t));
    free(tmp);
}

void dev_poison(void *p, size_t bytes) { CUDA_CHECK(cudaMemset(p, 0xFF, bytes)); }

size_t count_nonfinite(const float *x, size_t n) {
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) bad += !isfinite(x[i]);
    return bad;
}

void counted_copy(float *dst, const float *src, size_t n, unsigned long long *bytes) {
    memcpy(dst, src, sizeof(float) * n);
    *bytes += sizeof(float) * n;
}
