/* attention.h: what every FlashAttention chapter (02 onward) shares on the host, so that a chapter is its
 * kernels, its tiles, its model, its CPU loop nest and a short table (chapter.c):
 *
 *   AttnArgs      the problem's device tensors and sizes, the one argument of every launcher
 *   AttnChapter   a chapter's kernels (timed and instrumented builds) and its CPU version
 *   attn_run_gpu  each kernel timed alone, then the instrumented build counted, then one forward checked
 *   attn_run_cpu  the CPU version, counted and checked the same way
 *   AttnExpected  the sampled float64 check of O and L (every chapter's program and every test use it)
 *
 * Layout everywhere: [B, H, N, d] row-major; head h of batch b starts at row (b H + h) N. */
#ifndef FA_ATTENTION_H
#define FA_ATTENTION_H

#include <stddef.h>

#include "io.h"
#include "options.h"
#include "reference.h"
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
    /* its elements for a problem of B, H, N, d, in count.h's checked arithmetic */
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
     * outputs in t->extra that L follows from), adds each kernel's bytes to io[k] and its host wall-clock time to ms[k]. */
    void (*forward_cpu)(const Options *o, AttnHost *t, IoBytes *io, double *ms);
} AttnChapter;

/* The checks every FlashAttention chapter makes: d is 32, 64 or 128; Br and Bc are tiles the chapter
 * compiles; with a device (dev != NULL), the block's shared memory fits it (the message shows the sum and the
 * limit). Returns 0, or writes a message and returns 2 (chapter.h's validate). */
int attn_validate(const AttnChapter *c, const Options *o, const DeviceInfo *dev, char *msg, size_t len,
                  const char *chapter_id);

/* The CPU fallback's size for a FlashAttention-2 chapter (chapter.h's shrink_for_cpu): about a second of CPU
 * time, the float64 check included. One batch, at most 4 heads, N halved until flops(o) <= 1.2e9, keeping N's
 * remainder modulo the tiles (a ragged N stays ragged) and the causal mask. */
void attn_shrink_for_cpu(Options *o, unsigned long long (*flops)(const Options *o));

/* The FlashAttention-2 grid's arithmetic (a query block per thread block): K/V blocks that query block i visits (all Tc, or
 * with the causal mask those on or below the diagonal), and the key rows one head loads in all (the last
 * block ragged). */
long long attn_kv_blocks(int N, int Br, int Bc, int causal, long long i);
unsigned long long attn_keys_loaded(int N, int Br, int Bc, int causal);

/* Q and K uniform in [-2, 2), V in [-1, 1), from o->seed: scores of standard deviation about 1.3, so the
 * running maximum moves between K/V blocks; rounded to o->dtype, so that the host copies (and the float64
 * reference computed from them) hold exactly what the device stores. Each array holds B*H*N*d floats. */
void attn_inputs(const Options *o, float *Q, float *K, float *V);

/* The inputs of o, and outputs filled with NaN (0xFF bytes). attn_host_poison refills the outputs. */
AttnHost attn_host_make(const AttnChapter *c, const Options *o);
void attn_host_poison(AttnHost *t);
void attn_host_free(AttnHost *t);
/* After a forward pass: L from the chapter's own outputs, where it computes L on the host. */
void attn_host_finish(const AttnChapter *c, AttnHost *t);

/* Device memory one problem takes: Q, K, V, O, L and the chapter's buffers. */
size_t attn_device_bytes(const AttnChapter *c, const Options *o);
/* Host memory a run takes at most (the same on the CPU and the GPU): the host tensors (attn_host_make) and
 * the check's float64 rows (attn_expected). */
size_t attn_host_bytes(const AttnChapter *c, const Options *o);

/* The program's runs (chapter.h's run_gpu and run_cpu): times, counted bytes, and the check on the last
 * kernel's row. */
void attn_run_gpu(const AttnChapter *c, const Options *o, KernelRun *runs);
void attn_run_cpu(const AttnChapter *c, const Options *o, KernelRun *runs);

/* One forward pass on the GPU, for tests: t's inputs up, outputs poisoned, every kernel of the timed build
 * (or of the instrumented build when counted != 0; then io[k] receives kernel k's bytes), t's outputs down
 * (and L computed from l and m where the kernels write those). */
void attn_forward_gpu(const AttnChapter *c, const Options *o, AttnHost *t, int counted, IoBytes *io);

/* ---- the check ------------------------------------------------------------------------------------------
 * float64 O and L of some rows of some heads. Heads: all up to ATTN_CHECK_HEADS, else the first, the last
 * and evenly spaced between. Rows: all up to ATTN_FULL_CHECK_N tokens; above (a whole head costs seconds to
 * minutes of float64) ATTN_CHECK_ROWS of them: the first 8 (the first query block, which sees fewest keys
 * under the causal mask), the last 24 (the ragged last blocks) and 32 spread between. */
#define ATTN_CHECK_HEADS 4
#define ATTN_FULL_CHECK_N 1024
#define ATTN_CHECK_ROWS 64

struct AttnExpected {
    int N, d;
    int nheads, heads[ATTN_CHECK_HEADS]; /* checked heads (b*H + h)                      */
    int nrows, *rows;                    /* checked rows of each: all N, or the sample    */
    double *O, *L;                       /* expected: [nheads][nrows][d], [nheads][nrows] */
};

/* The tolerances of c for a run (its tolerances hook, else attn_tolerance for both). */
void attn_chapter_tolerances(const AttnChapter *c, const Options *o, const AttnHost *t, const AttnExpected *e,
                             double *tol_O, double *tol_L);

AttnExpected attn_expected(const Options *o, const float *Q, const float *K, const float *V);
void attn_expected_free(AttnExpected *e);
/* O and L (every head) against e. A non-finite value anywhere in O or L (an element left unwritten is still
 * NaN from the poison) fails its check, sampled or not. */
void attn_compare(const AttnExpected *e, const Options *o, const float *O, const float *L, ErrorStats *err_O,
                  ErrorStats *err_L);
/* The report has one check per row: the worse of O's and L's relative errors (max error: the larger). */
ErrorStats worse_of(ErrorStats a, ErrorStats b);
/* Relative L2 error allowed for O and for L in fp32: sums over up to N keys, so it grows slowly with N. */
double attn_tolerance(const Options *o);

#ifdef __cplusplus
}
#endif
#endif
