/* host_tensor.h: inputs, fp16 storage, and device buffers, for host code.
 *
 * Inputs are random (never zeros) from a fixed seed; fp16 tensors are stored as IEEE half bit patterns
 * (uint16_t) on the host and as __half on the device. Outputs are poisoned with 0xFF bytes before every run:
 * that pattern is NaN in both float and half, so an element a kernel forgets to write fails the check. */
#ifndef FA_HOST_TENSOR_H
#define FA_HOST_TENSOR_H

#include <stddef.h>
#include <stdint.h>

#include "options.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Deterministic generator (splitmix64): the same seed gives the same inputs on every machine. */
typedef struct {
    unsigned long long state;
} Rng;
Rng rng_seeded(unsigned long long seed);
double rng_uniform(Rng *r); /* [0, 1) */
double rng_normal(Rng *r);  /* N(0, 1) */

void fill_uniform(float *x, size_t n, Rng *r, float lo, float hi);
void fill_normal(float *x, size_t n, Rng *r, float stddev);

/* IEEE 754 binary16, round to nearest even; what the device's __float2half_rn does. */
uint16_t half_from_float(float f);
float half_to_float(uint16_t h);
/* Rounds every element through half, so that host copies hold exactly what an fp16 tensor stores. */
void round_through_half(float *x, size_t n);
/* bfloat16 (the top 16 bits of a float), round to nearest even; NaN stays NaN. */
uint16_t bf16_from_float(float f);
float bf16_to_float(uint16_t h);
/* What an element of storage type t holds: x itself (fp32), or x rounded to fp16 or bf16. */
float stored_value(float x, DType t);
/* Rounds every element to what storage type t holds. */
void round_to_storage(float *x, size_t n, DType t);

/* Host memory: malloc, or exit 2 with what needed how many bytes and how many are available (one rule for
 * every host allocation of the book; exit 3 is kept for CUDA errors). */
void *host_alloc(size_t bytes, const char *what);
/* MemAvailable of /proc/meminfo in bytes (0 where it cannot be read). */
size_t host_available_bytes(void);

/* Device buffers. Allocation failures exit with the bytes asked for and the bytes free. */
void *dev_alloc(size_t bytes);
void dev_free(void *p);
/* Copies n floats to the device as `t` (converted to half for fp16). */
void dev_upload(void *dst, const float *src, size_t n, DType t);
/* Copies n elements of type `t` back as floats. */
void dev_download(float *dst, const void *src, size_t n, DType t);
/* Fills with 0xFF bytes: NaN in float and in half. */
void dev_poison(void *p, size_t bytes);

size_t count_nonfinite(const float *x, size_t n);

/* dst <- src, n floats, adding their bytes to *bytes: the CPU versions' stand-in for a load from HBM (pass
 * &io->read) or a store to it (&io->write), so that they count bytes exactly where the kernels move them. */
void counted_copy(float *dst, const float *src, size_t n, unsigned long long *bytes);

#ifdef __cplusplus
}
#endif
#endif
