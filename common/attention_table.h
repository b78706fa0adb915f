/* attention_table.h: what a FlashAttention chapter declares in its table, and the host copies of one problem:
 *
 *   AttnArgs      the problem's device tensors and sizes, the one argument of every launcher
 *   AttnBuffer    a device buffer of the chapter's own, besides Q, K, V, O and L
 *   AttnHost      the problem's host copies (inputs, outputs, the chapter's outputs)
 *   AttnTiles     the tiles the kernels compile, and their shared memory
 *   AttnChapter   a chapter's kernels (timed and instrumented builds), buffers and CPU version
 *
 * Layout everywhere: [B, H, N, d] row-major; head h of batch b starts at row (b H + h) N. */
#ifndef FA_ATTENTION_TABLE_H
#define FA_ATTENTION_TABLE_H

#include <stddef.h>

#include "io_bytes.h"
#include "options.h"
#include "report.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct AttnExpected AttnExpected;

/* The most device buffers a chapter declares besides Q, K, V, O and L (AttnChapter.extra). */
#define ATTN_EXTRA_MAX 2

/* Device pointers and sizes. Q, K, V and O are in the storage type of the options (fp32, fp16 or bf16: the
 * kernels cast them); L is fp32. L = (m + log2 l) ln 2 is the natural-log log-sum-exp of a row's scaled scores
 * (every kernel of the book keeps m in log2 units, score x log2 e, so that each exponential is one exp2). */
typedef struct {
    const void *Q, *K, *V;  /* [B, H, N, d] in the storage type                                         */
    void *O;                /* [B, H, N, d] in the storage type                                         */
    float *L;               /* [B, H, N]: L of each row; NULL where the chapter computes L on the host  */
    void *extra[ATTN_EXTRA_MAX]; /* the chapter's own buffers, as its table declares them (AttnBuffer)  */
    int B, H, N, d;
    int Br, Bc;
    int causal;
    DType dtype;            /* the storage type of Q, K, V, O                                           */
} AttnArgs;

typedef void (*AttnLaunch)(const AttnArgs *a);

/* A device buffer a chapter's kernels use besides Q, K, V, O and L: allocated with them, its pointer in
 * AttnArgs.extra at its index in the table, freed with them. */
typedef struct {
    const char *name; /* what it holds, for messages */
    /* its elements for a problem of B, H, N, d, in checked_math.h's checked arithmetic */
    unsigned long long (*elements)(int B, int H, int N, int d);
    DType type;       /* its element type */
    int output;       /* 1: an output of the kernels (fp32): poisoned before each forward pass and downloaded into
                         AttnHost.extra, where the table's L_from_outputs reads it */
} AttnBuffer;

/* Host copies of one problem. L is always there: written by the CPU version or downloaded, or computed from
 * the chapter's own outputs (AttnChapter.L_from_outputs). */
typedef struct {
    float *Q, *K, *V, *O, *L;
    float *extra[ATTN_EXTRA_MAX];      /* the declared buffers that are outputs (AttnBuffer.output); else NULL */
    size_t extra_n[ATTN_EXTRA_MAX];    /* their elements */
    size_t n, rows;                    /* elements of Q (K, V, O); rows of L */
} AttnHost;

/* The tiles a chapter's kernels compile, and its shared memory per block (the chapter's tiles.h). */
typedef struct {
    int (*br_supported)(int Br);
    int (*bc_supported)(int Bc);
    const char *br_sizes, *bc_sizes; /* "16, 32, 64, 128": what the messages list */
    size_t (*smem_bytes)(int Br, int Bc, int d);
    const char *smem_formula;        /* the sum smem_bytes computes, in words, for the message */
} AttnTiles;

typedef struct {
    AttnTiles tiles;
    int nkernels; /* launched in this order; report rows 0 .. nkernels-1 */
    AttnLaunch timed[MAX_KERNELS], counted[MAX_KERNELS];
    AttnBuffer extra[ATTN_EXTRA_MAX]; /* the device buffers it needs besides Q, K, V, O and L */
    int nextra;
    /* Optional: where the kernels write no L, L from their outputs in t->extra (every row, on the host); the
     * device then has no L buffer. NULL: the kernels write L. */
    void (*L_from_outputs)(AttnHost *t);
    /* Optional: the relative errors a run of these outputs may have against the float64 reference, for O and
     * for L (NULL: attn_tolerance for both, fp32's rule). e holds the sampled expected rows, t the inputs. */
    void (*tolerances)(const Options *o, const AttnHost *t, const AttnExpected *e, double *tol_O, double *tol_L);
    /* The chapter's loop nest on host arrays that stand in for HBM, every head: fills t->O and t->L (or the
     * outputs in t->extra that L follows from), adds each kernel's bytes to io[k] and its host wall-clock time
     * to ms[k]. */
    void (*forward_cpu)(const Options *o, AttnHost *t, IoBytes *io, double *ms);
} AttnChapter;

#ifdef __cplusplus
}
#endif
#endif
