/* ch03.h: chapter 03's host side: the inputs, the CPU version of the loop nest, the checks, and the GPU run.
 * Used by the chapter's program and by tests/ch03. The closed forms are in model.h, the tiles in tiles.h. */
#ifndef FA_CH03_H
#define FA_CH03_H

#include <stddef.h>

#include "chapter.h"
#include "io.h"
#include "model.h"
#include "reference.h"

extern const Chapter chapter03;

/* Q and K uniform in [-2, 2), V in [-1, 1), from o->seed (chapter 02's inputs): scores of standard deviation
 * about 1.3, so the running maximum moves between K/V blocks. Each array holds B*H*N*d floats. */
void flash_v2_inputs(const Options *o, float *Q, float *K, float *V);

// ---- cpu.c: the kernel's loop nest on host arrays, counting bytes where the kernel loads and stores -------
/* One head: Q, K, V, O are N x d, L holds N floats. For each query block Q_i: load it, sweep the K/V blocks
 * (with the causal mask only those on or below the diagonal), keep O_i, m, l local, divide once, store O_i
 * and L_i. */
void flash_v2_head_cpu(const float *Q, const float *K, const float *V, float *O, float *L, int N, int d, int Br,
                       int Bc, int causal, IoBytes *io);
void flash_v2_run_cpu(const Options *o, KernelRun *runs);

// ---- check.c: O and L against the float64 reference -------------------------------------------------------
/* Expected values come from reference_attention_head (O and lse) for whole heads. Above FULL_CHECK_N tokens
 * a whole head costs seconds to minutes of float64, so a sample of rows is checked instead (the first 8, the
 * last 24 where the ragged blocks are, and 32 between), computed by reference_rows with the same formula;
 * the tests hold reference_rows to reference_attention_head. */
#define FULL_CHECK_N 1024
#define CHECK_HEADS 3 /* heads compared: all up to this many, else first, middle, last */
#define CHECK_ROWS 64 /* rows sampled per head above FULL_CHECK_N                      */

typedef struct {
    int N, d;
    int nheads, heads[CHECK_HEADS]; /* checked heads (b*H + h)                              */
    int nrows, *rows;               /* checked rows of each: all N, or the sample            */
    double *O, *L;                  /* expected: [nheads][nrows][d], [nheads][nrows]         */
} Expected;
Expected expected_make(const Options *o, const float *Q, const float *K, const float *V);
void expected_free(Expected *e);
/* Compares O ([B, H, N, d]) and L ([B, H, N]) with the expected rows. A non-finite value anywhere in O or L
 * (an element left unwritten is still NaN from the poison) fails its check, sampled or not. */
void expected_compare(const Expected *e, const Options *o, const float *O, const float *L, ErrorStats *err_O,
                      ErrorStats *err_L);
/* The report has one row, so one check: the worse of O's and L's relative errors (max error: the larger). */
ErrorStats worse_of(ErrorStats a, ErrorStats b);
/* Relative L2 error allowed for O and for L: fp32 sums over up to N keys, so it grows slowly with N. */
double flash_v2_tolerance(const Options *o);
/* float64 attention for some rows of one head: o[x][0..d) and lse[x] of query row rows[x], x < n. */
void reference_rows(const float *q, const float *k, const float *v, int N, int d, int causal, const int *rows,
                    int n, double *o, double *lse);

// ---- gpu.c ------------------------------------------------------------------------------------------------
size_t flash_v2_device_bytes(const Options *o);
void flash_v2_run_gpu(const Options *o, const DeviceInfo *dev, KernelRun *runs);
/* One forward pass on the GPU for tests: uploads Q, K, V (every head), poisons O and L with NaN, runs
 * flash_v2 (the instrumented build when counted != 0, its bytes then in *io), downloads O and L. */
void flash_v2_forward_gpu(const Options *o, const float *Q, const float *K, const float *V, float *O, float *L,
                          int counted, IoBytes *io);

#endif
