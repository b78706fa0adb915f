/* options.c: the command line shared by every chapter. */
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t dtype_size(DType t) { return t == DTYPE_FP32 ? 4 : 2; }
const char *dtype_name(DType t) { return t == DTYPE_FP16 ? "fp16" : t == DTYPE_BF16 ? "bf16" : "fp32"; }
int shrink_seq_keeping_tiles(int N, long long target, int tile) {
    if (N <= target || N < tile) return N;
    const long long r = N % tile, whole = (target - r) / tile;
    return (int)(r + (whole < 1 ? 1 : whole) * tile);
}

int head_dim_supported(int d) { return d == 32 || d == 64 || d == 128; }

void options_defaults(Options *o) {
    memset(o, 0, sizeof(*o));
    o->B = 10;
    o->H = 64;
    o->N = 1024;
    o->d = 64;
    o->rows = 0; /* 0: B*H*N */
    o->dtype = DTYPE_FP32;
    o->Br = 32;
    o->Bc = 32;
    o->gemm = GEMM_OWN;
    o->reps = 20;
    o->warmup = 2;
    o->seed = 1234;
    o->save_max = SAVE_MAX_DEFAULT;
}

static void usage(FILE *f, const char *prog, unsigned features, const char *summary) {
    fprintf(f, "%s\n\nusage: %s [options]\n", summary, prog);
    fprintf(f, "problem (defaults: the article's configuration)\n"
               "  --batch B        batches                      (default 10)\n"
               "  --heads H        heads per batch              (default 64)\n"
               "  --seq N          sequence length, tokens      (default 1024)\n"
               "  --dim d          head dimension: 32, 64, 128  (default 64)\n");
    if (features & CLI_ROWS)
        fprintf(f, "  --rows R         rows of length --seq          (default B*H*N)\n");
    if (features & CLI_DTYPE)
        fprintf(f, "  --dtype T        storage type: fp32 | fp16 | bf16, as the chapter allows (accumulation is fp32)\n");
    if (features & CLI_TILES) {
        /* a chapter of several kernels gives each its own tiles (Chapter.default_tiles) */
        const char *tile = (features & CLI_KERNEL) ? ": the kernel's own" : " 32";
        fprintf(f, "  --br Br          query rows per tile          (default%s)\n"
                   "  --bc Bc          key/value rows per tile      (default%s)\n", tile, tile);
    }
    if (features & CLI_CAUSAL) fprintf(f, "  --causal         causal mask (query i sees keys 0..i)\n");
    if (features & CLI_LAYOUT)
        fprintf(f, "  --layout L       naive | transposed | padded | swizzled | paired: how K_j sits in shared\n"
                   "                   memory and is read (default paired, the fastest)\n");
    if (features & CLI_KERNEL)
        fprintf(f, "  --kernel K       wmma | mma | mma_async: the chapter's three steps (default mma_async, the\n"
                   "                   fastest); the chapter rejects any other name, listing these\n");
    if (features & CLI_GEMM)
        fprintf(f, "  --gemm G         own | cublas: who computes the two matrix products (default own)\n");
    fprintf(f, "running\n"
               "  --reps R         timed repetitions, median and min reported (default 20)\n"
               "  --seed S         seed of the random inputs    (default 1234)\n"
               "  --csv FILE|-     also write the results as CSV (- = stdout)\n"
               "  --save DIR       also write the run's inputs and outputs as NumPy .npy files and a run.json\n"
               "                   into DIR (created if missing): what the GPU computed, or the CPU version\n"
               "                   without one; see the README, \"Checking a run elsewhere\"\n"
               "  --save-max BYTES the most --save may write (default 2147483648 = 2 GiB); a run that\n"
               "                   would write more is refused before any work\n"
               "  --model          print the IO/FLOP model and exit (no GPU needed)\n"
               "  --cpu            run the CPU version (the default without a CUDA device)\n"
               "  --no-check       skip the float64 reference check\n"
               "  --no-flush       do not flush the L2 cache between repetitions\n"
               "  --profile        each kernel once, no warm-up, no check (for ncu)\n"
               "  -h, --help       this text\n"
               "exit status: 0 ok, 1 a check failed, 2 bad input, 3 CUDA error, 4 REQUIRE_GPU=1 without GPU\n");
}

/* Parses a positive integer option value; prints an error and returns 0 on failure. */
static int parse_positive(const char *name, const char *text, long long max, long long *out) {
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end != '\0') {
        fprintf(stderr, "error: --%s expects an integer, got '%s'\n", name, text);
        return 0;
    }
    if (v <= 0) {
        fprintf(stderr, "error: --%s must be >= 1, got %lld\n", name, v);
        return 0;
    }
    if (v > max) {
        fprintf(stderr, "error: --%s must be <= %lld, got %lld\n", name, max, v);
        return 0;
    }
    *out = v;
    return 1;
}

enum { OPT_BATCH = 256, OPT_HEADS, OPT_SEQ, OPT_DIM, OPT_ROWS, OPT_DTYPE, OPT_BR, OPT_BC, OPT_CAUSAL,
       OPT_GEMM, OPT_REPS, OPT_SEED, OPT_CSV, OPT_MODEL, OPT_CPU, OPT_NOCHECK, OPT_NOFLUSH, OPT_PROFILE, OPT_SAVE, OPT_SAVE_MAX,
       OPT_HELP, OPT_LAYOUT, OPT_KERNEL };

int options_parse(Options *o, int argc, char **argv, unsigned features, const char *summary) {
    options_defaults(o);
    const struct option all[] = {
        {"batch", required_argument, 0, OPT_BATCH},   {"heads", required_argument, 0, OPT_HEADS},
        {"seq", required_argument, 0, OPT_SEQ},       {"dim", required_argument, 0, OPT_DIM},
        {"rows", required_argument, 0, OPT_ROWS},     {"dtype", required_argument, 0, OPT_DTYPE},
        {"br", required_argument, 0, OPT_BR},         {"bc", required_argument, 0, OPT_BC},
        {"causal", no_argument, 0, OPT_CAUSAL},       {"gemm", required_argument, 0, OPT_GEMM},
        {"reps", required_argument, 0, OPT_REPS},     {"seed", required_argument, 0, OPT_SEED},
        {"csv", required_argument, 0, OPT_CSV},       {"model", no_argument, 0, OPT_MODEL},
        {"cpu", no_argument, 0, OPT_CPU},             {"no-check", no_argument, 0, OPT_NOCHECK},
        {"no-flush", no_argument, 0, OPT_NOFLUSH},    {"profile", no_argument, 0, OPT_PROFILE},
        {"help", no_argument, 0, OPT_HELP},           {"layout", required_argument, 0, OPT_LAYOUT},
        {"save", required_argument, 0, OPT_SAVE},     {"save-max", required_argument, 0, OPT_SAVE_MAX},
        {"kernel", required_argument, 0, OPT_KERNEL}, {0, 0, 0, 0}};
    /* Keep only the options this chapter accepts: the rest are unknown to getopt and rejected. */
    struct option accepted[sizeof(all) / sizeof(all[0])];
    int n = 0;
    for (int i = 0; all[i].name; i++) {
        int v = all[i].val;
        if ((v == OPT_ROWS && !(features & CLI_ROWS)) || (v == OPT_DTYPE && !(features & CLI_DTYPE)) ||
            ((v == OPT_BR || v == OPT_BC) && !(features & CLI_TILES)) ||
            (v == OPT_CAUSAL && !(features & CLI_CAUSAL)) || (v == OPT_GEMM && !(features & CLI_GEMM)) ||
            (v == OPT_LAYOUT && !(features & CLI_LAYOUT)) || (v == OPT_KERNEL && !(features & CLI_KERNEL)))
            continue;
        accepted[n++] = all[i];
    }
    memset(&accepted[n], 0, sizeof(accepted[n]));

    const char *prog = argc > 0 ? argv[0] : "run";
    long long v;
    int c, save_max_given = 0;
    optind = 1;
    opterr = 0; /* we print our own messages */
    while ((c = getopt_long(argc, argv, ":h", accepted, NULL)) != -1) {
        switch (c) {
        case OPT_BATCH: if (!parse_positive("batch", optarg, INT_MAX, &v)) return 2; o->B = (int)v; break;
        case OPT_HEADS: if (!parse_positive("heads", optarg, INT_MAX, &v)) return 2; o->H = (int)v; break;
        case OPT_SEQ: if (!parse_positive("seq", optarg, INT_MAX, &v)) return 2; o->N = (int)v; break;
        case OPT_DIM:
            if (!parse_positive("dim", optarg, INT_MAX, &v)) return 2;
            if (!head_dim_supported((int)v)) {
                fprintf(stderr, "error: --dim %lld is not supported: the kernels exist for d = 32, 64 and 128\n", v);
                return 2;
            }
            o->d = (int)v;
           
            break;
        case OPT_ROWS: if (!parse_positive("rows", optarg, LLONG_MAX, &v)) return 2; o->rows = v; break;
        case OPT_BR: if (!parse_positive("br", optarg, 4096, &v)) return 2; o->Br = (int)v; o->br_given = 1; break;
        case OPT_BC: if (!parse_positive("bc", optarg, 4096, &v)) return 2; o->Bc = (int)v; o->bc_given = 1; break;
        case OPT_REPS: if (!parse_positive("reps", optarg, 100000, &v)) return 2; o->reps = (int)v; break;
        case OPT_SEED: {
            char *end = NULL;
            errno = 0;
            unsigned long long s = strtoull(optarg, &end, 10);
            /* strtoull accepts "-1" (and wraps it): a sign is not a digit, so it is refused here. */
            if (errno || end == optarg || *end || !(optarg[0] >= '0' && optarg[0] <= '9')) {
                fprintf(stderr, "error: --seed expects a non-negative integer, got '%s'\n", optarg);
                return 2;
            }
            o->seed = s;
            break;
        }
        case OPT_DTYPE:
            if (!strcmp(optarg, "fp32")) o->dtype = DTYPE_FP32;
            else if (!strcmp(optarg, "fp16")) o->dtype = DTYPE_FP16;
            else if (!strcmp(optarg, "bf16")) o->dtype = DTYPE_BF16;
            else { fprintf(stderr, "error: --dtype must be fp32, fp16 or bf16, got '%s'\n", optarg); return 2; }
            o->dtype_given = 1;
            break;
        case OPT_GEMM:
            if (!strcmp(optarg, "own")) o->gemm = GEMM_OWN;
            else if (!strcmp(optarg, "cublas")) o->gemm = GEMM_CUBLAS;
            else { fprintf(stderr, "error: --gemm must be own or cublas, got '%s'\n", optarg); return 2; }
            break;
        case OPT_CAUSAL: o->causal = 1; break;
        case OPT_LAYOUT: o->layout = optarg; break;
        case OPT_KERNEL: o->kernel = optarg; break;
        case OPT_CSV: o->csv_path = optarg; break;
        case OPT_SAVE:
            if (!*optarg) { fprintf(stderr, "error: --save expects a directory, got ''\n"); return 2; }
            o->save_dir = optarg;
            break;
        case OPT_SAVE_MAX:
            if (!parse_positive("save-max", optarg, LLONG_MAX, &v)) return 2;
            o->save_max = (unsigned long long)v;
            save_max_given = 1;
            break;
        case OPT_MODEL: o->model_only = 1; break;
        case OPT_CPU: o->cpu = 1; break;
        case OPT_NOCHECK: o->no_check = 1; break;
        case OPT_NOFLUSH: o->no_flush = 1; break;
        case OPT_PROFILE: o->profile = 1; break;
        case 'h':
        case OPT_HELP: usage(stdout, prog, features, summary); return 1;
        case ':':
            fprintf(stderr, "error: option '%s' needs a value (see --help)\n", argv[optind - 1]);
            return 2;
        default:
            fprintf(stderr, "error: unknown option '%s' (see --help)\n", argv[optind - 1]);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "error: unexpected argument '%s' (see --help)\n", argv[optind]);
        return 2;
    }
    if (save_max_given && !o->save_dir) {
        fprintf(stderr, "error: --save-max limits --save: give --save DIR too\n");
        return 2;
    }
    if (o->save_dir && (o->model_only || o->profile)) {
        fprintf(stderr, "error: --save with %s: %s\n", o->model_only ? "--model" : "--profile",
                o->model_only ? "--model computes nothing to save" :
                                "--profile runs each kernel exactly once for ncu; save from a run without --profile");
        return 2;
    }
    if (o->profile) {
        o->warmup = 0;
        o->reps = 1;
        o->no_check = 1;
    }
    if (o->rows == 0) o->rows = (long long)o->B * o->H * o->N;
    return 0;
}
