/* options.h: one command line for every chapter (getopt_long). Defaults are the article's configuration:
 * B=10 batches, H=64 heads, N=1024 tokens, d=64, fp32, Br=Bc=32. A chapter accepts the common options plus
 * the features it declares (tiles, causal mask, GEMM backend, fp16 storage, row count); any other option is
 * rejected with a message and exit status 2. */
#ifndef FA_OPTIONS_H
#define FA_OPTIONS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* --save's default limit: 2 GiB of arrays. */
#define SAVE_MAX_DEFAULT (2ull << 30)

typedef enum { DTYPE_FP32 = 0, DTYPE_FP16 = 1, DTYPE_BF16 = 2 } DType;
typedef enum { GEMM_OWN = 0, GEMM_CUBLAS = 1 } GemmBackend;

/* Optional features a chapter opts into (bit mask). */
enum {
    CLI_DTYPE = 1u << 0,  /* --dtype fp32|fp16|bf16 (a chapter says which it takes) */
    CLI_TILES = 1u << 1,  /* --br, --bc                    */
    CLI_CAUSAL = 1u << 2, /* --causal                      */
    CLI_GEMM = 1u << 3,   /* --gemm own|cublas             */
    CLI_ROWS = 1u << 4,   /* --rows R (chapter 01: rows of length --seq) */
    CLI_LAYOUT = 1u << 5, /* --layout NAME (chapter 04: how K_j sits in shared memory) */
    CLI_KERNEL = 1u << 6, /* --kernel NAME (chapter 05: which tensor-core kernel, a step of the chapter) */
};

typedef struct {
    int B, H, N, d;          /* batch, heads, sequence length, head dimension */
    long long rows;          /* chapter 01: number of rows (default B*H*N)   */
    DType dtype;             /* storage type of Q, K, V, S, P, O              */
    int dtype_given;         /* --dtype was on the command line (else the chapter's default applies) */
    int Br, Bc;              /* FlashAttention tile sizes                     */
    int br_given, bc_given;  /* --br, --bc were on the command line (else the chapter's default tiles apply) */
    int causal;              /* causal mask                                   */
    const char *layout;      /* chapter 04's --layout; NULL: the chapter's default */
    const char *kernel;      /* chapter 05's --kernel; NULL: the chapter's default */
    GemmBackend gemm;        /* chapter 00: own tiled GEMM or cuBLAS          */
    int reps;                /* timed repetitions (median and min reported)   */
    unsigned long long seed; /* random inputs                                 */
    const char *csv_path;    /* NULL: none; "-": stdout                        */
    const char *save_dir;    /* --save DIR: the run's inputs and outputs as .npy (save.h); NULL: none */
    unsigned long long save_max; /* --save-max BYTES: the most --save may write (default SAVE_MAX_DEFAULT) */
    int model_only;          /* --model: print the IO/FLOP model, no GPU       */
    int cpu;                 /* --cpu: run the CPU version                     */
    int no_check;            /* --no-check: skip the float64 reference         */
    int no_flush;            /* --no-flush: keep L2 warm between repetitions   */
    int warmup;              /* warm-up runs before timing (default 2)         */
    int profile;             /* --profile: each kernel once (timed build), no warm-up, no counted run,
                                no check: what ncu should see                    */
} Options;

/* Fills *o with the defaults, then parses argv. Returns 0 on success, 1 when --help was printed (the caller
 * exits 0), or 2 after printing an error to stderr (the caller exits 2). `features` is the CLI_* mask. */
int options_parse(Options *o, int argc, char **argv, unsigned features, const char *program_summary);

void options_defaults(Options *o);
size_t dtype_size(DType t);
const char *dtype_name(DType t);

/* The sequence length a CPU run takes instead of N when N is above `target`: the largest length <= target with
 * N's remainder modulo `tile` (the chapter's tiles), and at least one whole tile besides, so that a ragged last
 * tile stays ragged by the same number of rows. N itself when N <= target or N < tile. */
int shrink_seq_keeping_tiles(int N, long long target, int tile);

/* Head dimensions every attention chapter supports. */
int head_dim_supported(int d);

#ifdef __cplusplus
}
#endif
#endif
