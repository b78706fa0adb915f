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
    o->dtype = DTYPE_FP32;
    o->Br = 32;
    o->Bc = 32;
    o->reps = 20;
    o->warmup = 2;
    o->seed = 1234;
    o->save_max = SAVE_MAX_DEFAULT;
}

int options_count(const ChapterOption *declared) {
    int n = 0;
    while (declared && declared[n].name) n++;
    return n;
}

int option_for_column(const ChapterOption *declared, const char *column) {
    for (int i = 0; i < options_count(declared); i++)
        if (declared[i].column && !strcmp(declared[i].column, column)) return i;
    return -1;
}

long long option_value(const Options *o, const ChapterOption *declared, int i) {
    if (o->chapter[i].set) return o->chapter[i].value;
    const ChapterOption *c = &declared[i];
    return c->values ? c->default_index : c->default_number ? c->default_number(o) : 0;
}

const char *option_text(const Options *o, const ChapterOption *declared, int i, char *buf, size_t len) {
    const long long v = option_value(o, declared, i);
    if (declared[i].values) return declared[i].values[v];
    snprintf(buf, len, "%lld", v);
    return buf;
}

void option_assign(Options *o, int i, long long value) {
    o->chapter[i].value = value;
    o->chapter[i].set = 1;
}

long long options_rows(const Options *o, const ChapterOption *declared) {
    const int i = option_for_column(declared, "rows");
    return i >= 0 ? option_value(o, declared, i) : (long long)o->B * o->H * o->N;
}

const char *options_size_flags(const ChapterOption *declared, char *buf, size_t len) {
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < options_count(declared) && at < len; i++)
        if (declared[i].flags & OPTION_SIZE) at += (size_t)snprintf(buf + at, len - at, ", --%s", declared[i].name);
    return buf;
}

/* "a, b, c": the words of an option, for its messages. */
static const char *word_list(const ChapterOption *c, char *buf, size_t len) {
    size_t at = 0;
    buf[0] = '\0';
    for (int k = 0; c->values[k] && at < len; k++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s", k ? ", " : "", c->values[k]);
    return buf;
}

static void usage(FILE *f, const char *prog, const CommandLine *cl) {
    const unsigned features = cl->features;
    fprintf(f, "%s\n\nusage: %s [options]\n", cl->summary, prog);
    fprintf(f, "problem (defaults: the article's configuration)\n"
               "  --batch B        batches                      (default 10)\n"
               "  --heads H        heads per batch              (default 64)\n"
               "  --seq N          sequence length, tokens      (default 1024)\n"
               "  --dim d          head dimension: 32, 64, 128  (default 64)\n");
    if (features & CLI_DTYPE)
        fprintf(f, "  --dtype T        storage type: fp32 | fp16 | bf16, as the chapter allows (accumulation is fp32)\n");
    if (features & CLI_TILES) {
        /* an option that picks the tiles (ChapterOption.tiles, .tiles_for) gives each of its values its own */
        char tile[64];
        snprintf(tile, sizeof(tile), " %d", cl->default_br ? cl->default_br : 32);
        for (int i = 0; i < options_count(cl->options); i++)
            if (cl->options[i].tiles || cl->options[i].tiles_for)
                snprintf(tile, sizeof(tile), ": the %s's own", cl->options[i].name);
        fprintf(f, "  --br Br          query rows per tile          (default%s)\n"
                   "  --bc Bc          key/value rows per tile      (default%s)\n", tile, tile);
    }
    if (features & CLI_CAUSAL) fprintf(f, "  --causal         causal mask (query i sees keys 0..i)\n");
    for (int i = 0; i < options_count(cl->options); i++) {
        const ChapterOption *c = &cl->options[i];
        char flag[64];
        snprintf(flag, sizeof(flag), "--%s %s", c->name, c->metavar);
        fprintf(f, "  %-16s ", flag);
        for (const char *h = c->help; *h; h++) {
            fputc(*h, f);
            if (*h == '\n') fprintf(f, "%19s", "");
        }
        fputc('\n', f);
    }
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

/* A declared option's value from text, as the command line gives it. Returns 0, or 2 with a message. */
static int chapter_value(const ChapterOption *c, const char *text, long long *out, char *msg, size_t len) {
    if (!c->values) {
        char *end = NULL;
        errno = 0;
        const long long v = strtoll(text, &end, 10);
        if (errno || end == text || *end != '\0')
            snprintf(msg, len, "--%s expects an integer, got '%s'", c->name, text);
        else if (v <= 0) snprintf(msg, len, "--%s must be >= 1, got %lld", c->name, v);
        else {
            *out = v;
            return 0;
        }
        return 2;
    }
    for (int k = 0; c->values[k]; k++)
        if (!strcmp(text, c->values[k])) {
            *out = k;
            return 0;
        }
    char list[256];
    snprintf(msg, len, "--%s %s is not %s: one of %s", c->name, text, c->what, word_list(c, list, sizeof(list)));
    return 2;
}

int option_set(Options *o, const ChapterOption *declared, const char *name, const char *text, char *msg, size_t len) {
    for (int i = 0; i < options_count(declared); i++) {
        if (strcmp(declared[i].name, name)) continue;
        long long v;
        if (chapter_value(&declared[i], text, &v, msg, len)) return 2;
        option_assign(o, i, v);
        o->chapter[i].given = 1;
        return 0;
    }
    snprintf(msg, len, "unknown option '--%s'", name);
    return 2;
}

enum { OPT_BATCH = 256, OPT_HEADS, OPT_SEQ, OPT_DIM, OPT_DTYPE, OPT_BR, OPT_BC, OPT_CAUSAL, OPT_REPS, OPT_SEED,
       OPT_CSV, OPT_MODEL, OPT_CPU, OPT_NOCHECK, OPT_NOFLUSH, OPT_PROFILE, OPT_SAVE, OPT_SAVE_MAX, OPT_HELP,
       OPT_CHAPTER /* + i: the chapter's option i */ };

int options_parse(Options *o, int argc, char **argv, const CommandLine *cl) {
    options_defaults(o);
    const unsigned features = cl->features;
    const ChapterOption *declared = cl->options;
    const int ndeclared = options_count(declared);
    if (ndeclared > CHAPTER_OPTIONS_MAX) {
        fprintf(stderr, "error: the chapter declares %d options, more than the %d Options holds\n", ndeclared,
                CHAPTER_OPTIONS_MAX);
        return 2;
    }
    const struct option all[] = {
        {"batch", required_argument, 0, OPT_BATCH},   {"heads", required_argument, 0, OPT_HEADS},
        {"seq", required_argument, 0, OPT_SEQ},       {"dim", required_argument, 0, OPT_DIM},
        {"dtype", required_argument, 0, OPT_DTYPE},   {"br", required_argument, 0, OPT_BR},
        {"bc", required_argument, 0, OPT_BC},         {"causal", no_argument, 0, OPT_CAUSAL},
        {"reps", required_argument, 0, OPT_REPS},     {"seed", required_argument, 0, OPT_SEED},
        {"csv", required_argument, 0, OPT_CSV},       {"model", no_argument, 0, OPT_MODEL},
        {"cpu", no_argument, 0, OPT_CPU},             {"no-check", no_argument, 0, OPT_NOCHECK},
        {"no-flush", no_argument, 0, OPT_NOFLUSH},    {"profile", no_argument, 0, OPT_PROFILE},
        {"help", no_argument, 0, OPT_HELP},           {"save", required_argument, 0, OPT_SAVE},
        {"save-max", required_argument, 0, OPT_SAVE_MAX}, {0, 0, 0, 0}};
    /* Keep only the options this chapter accepts (the rest are unknown to getopt and rejected), then its own. */
    struct option accepted[sizeof(all) / sizeof(all[0]) + CHAPTER_OPTIONS_MAX];
    int n = 0;
    for (int i = 0; all[i].name; i++) {
        int v = all[i].val;
        if ((v == OPT_DTYPE && !(features & CLI_DTYPE)) || ((v == OPT_BR || v == OPT_BC) && !(features & CLI_TILES)) ||
            (v == OPT_CAUSAL && !(features & CLI_CAUSAL)))
            continue;
        accepted[n++] = all[i];
    }
    for (int i = 0; i < ndeclared; i++) {
        const struct option c = {declared[i].name, required_argument, 0, OPT_CHAPTER + i};
        accepted[n++] = c;
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
        case OPT_CAUSAL: o->causal = 1; break;
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
        case OPT_HELP: usage(stdout, prog, cl); return 1;
        case ':':
            fprintf(stderr, "error: option '%s' needs a value (see --help)\n", argv[optind - 1]);
            return 2;
        default:
            if (c >= OPT_CHAPTER && c < OPT_CHAPTER + ndeclared) {
                char msg[512];
                if (option_set(o, declared, declared[c - OPT_CHAPTER].name, optarg, msg, sizeof(msg))) {
                    fprintf(stderr, "error: %s\n", msg);
                    return 2;
                }
                break;
            }
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
    /* The declared options' defaults, fixed now (a number's default depends on the problem as given), and the
     * tiles without --br, --bc: those of the option that picks them, else the chapter's. */
    for (int i = 0; i < ndeclared; i++)
        if (!o->chapter[i].set) option_assign(o, i, option_value(o, declared, i));
    if (cl->default_br) o->Br = o->br_given ? o->Br : cl->default_br;
    if (cl->default_bc) o->Bc = o->bc_given ? o->Bc : cl->default_bc;
    for (int i = 0; i < ndeclared; i++) {
        int Br, Bc;
        if (declared[i].tiles_for) declared[i].tiles_for((int)o->chapter[i].value, o, &Br, &Bc);
        else if (declared[i].tiles) Br = declared[i].tiles[o->chapter[i].value][0], Bc = declared[i].tiles[o->chapter[i].value][1];
        else continue;
        if (!o->br_given) o->Br = Br;
        if (!o->bc_given) o->Bc = Bc;
    }
    return 0;
}
