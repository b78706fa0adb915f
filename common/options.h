/* options.h: one command line for every chapter (getopt_long). Defaults are the article's configuration:
 * B=10 batches, H=64 heads, N=1024 tokens, d=64, fp32, Br=Bc=32. A chapter accepts the common options, the
 * common features it opts into (tiles, causal mask, storage type) and the options it declares itself
 * (ChapterOption: a name, the words or the number it takes, a default, a help line); any other option is
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

/* Optional common features a chapter opts into (bit mask). */
enum {
    CLI_DTYPE = 1u << 0,  /* --dtype fp32|fp16|bf16 (a chapter says which it takes) */
    CLI_TILES = 1u << 1,  /* --br, --bc                    */
    CLI_CAUSAL = 1u << 2, /* --causal                      */
};

/* The most options a chapter declares. */
#define CHAPTER_OPTIONS_MAX 4

/* One declared option's value in Options. */
typedef struct {
    long long value; /* a word's index into ChapterOption.values, or the number */
    int set;         /* value holds the option's value (given, or its default filled in by options_parse) */
    int given;       /* it was on the command line */
} OptionValue;

typedef struct Options Options;

/* How a declared option shows outside the chapter (bit mask). */
enum {
    OPTION_SIZE = 1u << 0,         /* a size of the problem: the report's header line shows NAME=VALUE, and the
                                      messages that ask for a smaller problem name --NAME */
    OPTION_SHOWN_IF_CHANGED = 1u << 1, /* the header line shows NAME=VALUE when it is not the default */
    OPTION_RECORDED = 1u << 2,     /* run.json (--save) records it as given, "default" where not given */
};

/* An option a chapter declares for itself (Chapter.options, a list ended by an entry without a name):
 * --NAME WORD, one of `values`, or (values == NULL) --NAME NUMBER, a positive integer. options_parse checks
 * the value, fills in the default and prints the help line; the chapter reads the value with option_value. */
typedef struct {
    const char *name;          /* "--NAME" on the command line                                            */
    const char *metavar;       /* the value's placeholder in --help                                       */
    const char *const *values; /* the words it takes, ended by NULL; NULL: a positive integer             */
    int default_index;         /* words: values[default_index] where the option is not given              */
    long long (*default_number)(const Options *o); /* numbers: the value where not given                  */
    const char *what;          /* words: what a value is, for the message that rejects another word:
                                  "--NAME WORD is not WHAT: one of ..."                                   */
    const char *help;          /* --help's text beside "--NAME METAVAR"; a '\n' starts an indented line  */
    const int (*tiles)[2];     /* words, optional: per value, the Br and Bc used without --br, --bc       */
    /* words, optional, instead of `tiles`: per value and problem (o: d, N, the mask, as parsed), the Br and Bc used
     * without --br, --bc */
    void (*tiles_for)(int value, const struct Options *o, int *Br, int *Bc);
    const char *column;        /* optional: the results' column it fills (report.h, "option columns")    */
    unsigned flags;            /* OPTION_* */
} ChapterOption;

struct Options {
    int B, H, N, d;          /* batch, heads, sequence length, head dimension */
    DType dtype;             /* storage type of Q, K, V, S, P, O              */
    int dtype_given;         /* --dtype was on the command line (else the chapter's default applies) */
    int Br, Bc;              /* FlashAttention tile sizes                     */
    int br_given, bc_given;  /* --br, --bc were on the command line (else the chapter's default tiles apply) */
    int causal;              /* causal mask                                   */
    OptionValue chapter[CHAPTER_OPTIONS_MAX]; /* the chapter's declared options, in its order */
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
};

/* What a program's command line takes. */
typedef struct {
    const char *summary;          /* --help's first line                                                    */
    unsigned features;            /* CLI_* */
    const ChapterOption *options; /* the chapter's own (ended by an entry without a name); NULL: none       */
    int default_br, default_bc;   /* the tiles without --br, --bc (0: 32), where no option's tiles apply     */
} CommandLine;

/* Fills *o with the defaults, then parses argv. Returns 0 on success, 1 when --help was printed (the caller
 * exits 0), or 2 after printing an error to stderr (the caller exits 2). */
int options_parse(Options *o, int argc, char **argv, const CommandLine *cl);

void options_defaults(Options *o);

/* Declared option i of `declared` (the chapter's list): its value in o, or its default where o has none. */
long long option_value(const Options *o, const ChapterOption *declared, int i);
/* Its value as text: the word, or the number (into buf). */
const char *option_text(const Options *o, const ChapterOption *declared, int i, char *buf, size_t len);
/* Sets option `name` of `declared` from text, as the command line would. Returns 0, or 2 with the command
 * line's message in msg. */
int option_set(Options *o, const ChapterOption *declared, const char *name, const char *text, char *msg, size_t len);
/* Sets declared option i to a value (a shrunk size, say; a test's choice), without marking it given. */
void option_assign(Options *o, int i, long long value);
/* The number of options in `declared`, and the index of the one that fills column `column` (-1: none). */
int options_count(const ChapterOption *declared);
int option_for_column(const ChapterOption *declared, const char *column);
/* The rows of the problem: the value of the declared option that fills the results' rows column, else B*H*N
 * (one per query row of every head). */
long long options_rows(const Options *o, const ChapterOption *declared);
/* ", --NAME" for every declared size (OPTION_SIZE), for the messages that ask for a smaller problem. */
const char *options_size_flags(const ChapterOption *declared, char *buf, size_t len);

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
