/* driver.c: the driver shared by every chapter's program (see driver.h). */
#include "driver.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checked_math.h"
#include "cuda_check.h"
#include "host_tensor.h"

int require_gpu_env(void) {
    const char *r = getenv("REQUIRE_GPU");
    return r && *r && strcmp(r, "0") != 0;
}

const AttnChapter *chapter_attention(const Chapter *ch, const Options *o) {
    if (!ch->attention || !ch->attention_by) return ch->attention;
    for (int i = 0; i < options_count(ch->options); i++)
        if (!strcmp(ch->options[i].name, ch->attention_by)) return &ch->attention[option_value(o, ch->options, i)];
    return ch->attention;
}

size_t chapter_device_bytes(const Chapter *ch, const Options *o) {
    return chapter_attention(ch, o) ? attn_device_bytes(chapter_attention(ch, o), o) : ch->device_bytes(o);
}

size_t chapter_host_bytes(const Chapter *ch, const Options *o, int cpu) {
    return chapter_attention(ch, o) ? attn_host_bytes(chapter_attention(ch, o), o) : ch->host_bytes(o, cpu);
}

void chapter_run_gpu(const Chapter *ch, const Options *o, const DeviceInfo *dev, KernelRun *runs) {
    if (chapter_attention(ch, o)) attn_run_gpu(chapter_attention(ch, o), o, runs);
    else ch->run_gpu(o, dev, runs);
}

void chapter_run_cpu(const Chapter *ch, const Options *o, KernelRun *runs) {
    if (chapter_attention(ch, o)) attn_run_cpu(chapter_attention(ch, o), o, runs);
    else ch->run_cpu(o, runs);
}

SavePlan chapter_save_plan(const Chapter *ch, const Options *o) {
    KernelModel m[MAX_KERNELS];
    memset(m, 0, sizeof(m));
    const int n = ch->models(o, m);
    const char *names[MAX_KERNELS];
    for (int k = 0; k < n; k++) names[k] = m[k].kernel;
    return save_plan(ch->save, o, options_rows(o, ch->options), names, n);
}

/* --save: run.json after the report, and a line saying what was written where. */
static void save_finish(FILE *human, const Chapter *ch, const Options *o, const ReportContext *ctx,
                        const KernelModel *m, const KernelRun *runs, int n) {
    const SavePlan plan = chapter_save_plan(ch, o);
    const SaveRunInfo info = {ch->id,      ch->title, ctx->gpu, ch->options, o, ctx->requested, &plan, m, runs, n,
                              ctx->total_label};
    save_run_json(&info);
    if (save_failures()) {
        fprintf(stderr, "error: --save %s: %d file(s) could not be written (see above)\n", o->save_dir,
                save_failures());
        return;
    }
    char a[32];
    fprintf(human, "saved to %s/:", o->save_dir);
    for (int i = 0; i < plan.n; i++) fprintf(human, " %s.npy", plan.a[i].name);
    fprintf(human, " run.json (%s bytes of arrays; %s)\n", fmt_bytes(plan.bytes, a, sizeof(a)),
            strcmp(ctx->gpu, "cpu") ? "what the GPU computed" : "the CPU version's outputs");
    if (plan.left_out_bytes)
        fprintf(human, "note: S.npy and P.npy (%s bytes) left out: with them the files would pass --save-max\n",
                fmt_bytes(plan.left_out_bytes, a, sizeof(a)));
}

/* 1 once a message has said that stdout could not be written (the CSV of --csv - went there). */
static int stdout_failed_said;

/* The CSV destination, opened before any work so that a path that cannot be written stops the program at once.
 * A file is opened for appending (an existing one is not emptied yet) and truncated when the results are
 * written; a file this program created and never wrote is removed again. */
typedef struct {
    FILE *f;          /* NULL: no --csv */
    const char *path;
    int created, written;
} CsvOut;

static int csv_open(CsvOut *c, const char *path) {
    memset(c, 0, sizeof(*c));
    c->path = path;
    if (!path) return 1;
    if (strcmp(path, "-") == 0) {
        c->f = stdout;
        return 1;
    }
    c->created = access(path, F_OK) != 0;
    c->f = fopen(path, "a");
    if (!c->f) {
        fprintf(stderr, "error: cannot write the CSV file '%s': %s (--csv)\n", path, strerror(errno));
        return 0;
    }
    return 1;
}

static int csv_write(CsvOut *c, const ReportContext *ctx, const KernelModel *m, const KernelRun *runs, int n) {
    if (!c->f) return 0;
    if (c->f != stdout && ftruncate(fileno(c->f), 0) != 0) {
        fprintf(stderr, "error: cannot write the CSV file '%s': %s\n", c->path, strerror(errno));
        return 2;
    }
    report_csv(c->f, ctx, m, runs, n, 1);
    c->written = 1;
    errno = 0;
    if (fflush(c->f) != 0 || ferror(c->f)) {
        fprintf(stderr, "error: cannot write the CSV file '%s': %s\n", c->path, strerror(errno ? errno : EIO));
        stdout_failed_said = c->f == stdout; /* said once: chapter_main does not say it again */
        return 2;
    }
    return 0;
}

/* Returns 0, or 2 where the file could not be closed (its last bytes not written). */
static int csv_close(CsvOut *c) {
    if (!c->f || c->f == stdout) return 0;
    const int bad = fclose(c->f) != 0;
    if (c->created && !c->written) remove(c->path);
    if (bad && c->written) {
        fprintf(stderr, "error: cannot write the CSV file '%s': %s\n", c->path, strerror(errno));
        return 2;
    }
    return 0;
}

/* Computes every count of the problem in checked_math.h's checked arithmetic: the models and their totals, the
 * memory a run needs, and the counts of the --model lines (printed into a discarded stream). Returns 1 when
 * they all fit in 64 bits, else says so and returns 0: a count the program prints is exact, never wrapped. */
static int counts_fit(const Chapter *ch, const Options *o) {
    KernelModel m[MAX_KERNELS];
    memset(m, 0, sizeof(m));
    count_overflow_clear();
    model_counts(m, ch->models(o, m));
    chapter_device_bytes(ch, o);
    chapter_host_bytes(ch, o, 1);
    chapter_host_bytes(ch, o, 0);
    if (ch->print_model_extra) {
        FILE *sink = fopen("/dev/null", "w");
        if (sink) {
            ch->print_model_extra(sink, o, NULL);
            fclose(sink);
        }
    }
    if (!count_overflowed()) return 1;
    char sizes[160] = "", flags[128];
    for (int i = 0, at = 0; i < options_count(ch->options) && at < (int)sizeof(sizes); i++)
        if (ch->options[i].flags & OPTION_SIZE) {
            char v[32];
            at += snprintf(sizes + at, sizeof(sizes) - at, " %s=%s", ch->options[i].name,
                           option_text(o, ch->options, i, v, sizeof(v)));
        }
    fprintf(stderr,
            "error: B=%d H=%d N=%d d=%d%s: a byte or FLOP count of this problem does not fit in 64 bits (the largest "
            "count is " COUNT_LIMIT_TEXT "); make the problem smaller (--batch, --heads, --seq%s)\n",
            o->B, o->H, o->N, o->d, sizes, options_size_flags(ch->options, flags, sizeof(flags)));
    return 0;
}

/* Checks a sized problem against the free device memory before anything is allocated. */
static int fits_in_memory(const Chapter *ch, const Options *o) {
    const size_t need = chapter_device_bytes(ch, o);
    const size_t free_b = device_free_bytes();
    char flags[128];
    if (need > free_b) {
        fprintf(stderr,
                "error: this problem needs %zu bytes (%.2f GB) of GPU memory, but only %zu bytes (%.2f GB) are "
                "free; make the problem smaller (--batch, --heads, --seq%s)\n",
                need, need / 1e9, free_b, free_b / 1e9, options_size_flags(ch->options, flags, sizeof(flags)));
        return 0;
    }
    return 1;
}

/* Checks the host memory a run takes (the CPU version's arrays, or the GPU run's host copies) against
 * MemAvailable before anything is allocated. Where MemAvailable cannot be read, host_alloc still stops an
 * allocation that fails. */
static int fits_in_host_memory(const Chapter *ch, const Options *o, int cpu) {
    const size_t need = chapter_host_bytes(ch, o, cpu);
    const size_t avail = host_available_bytes();
    char flags[128];
    if (avail && need > avail) {
        fprintf(stderr,
                "error: this problem needs %zu bytes (%.2f GB) of host memory for the %s, but only %zu bytes (%.2f GB) "
                "are available (MemAvailable); make the problem smaller (--batch, --heads, --seq%s)\n",
                need, need / 1e9, cpu ? "CPU version" : "host copies of the GPU run", avail, avail / 1e9,
                options_size_flags(ch->options, flags, sizeof(flags)));
        return 0;
    }
    return 1;
}

static int all_checks_pass(const KernelRun *runs, int n, const KernelModel *m) {
    int ok = 1;
    for (int i = 0; i <= n; i++)
        if (runs[i].have_check && !error_ok(&runs[i].err, runs[i].tol)) {
            fprintf(stderr, "FAILED: %s: rel err %.3e (tolerance %.1e), max err %.3e, %zu non-finite outputs\n",
                    i < n ? m[i].kernel : "total", runs[i].err.rel, runs[i].tol, runs[i].err.max_abs,
                    runs[i].err.nonfinite);
            ok = 0;
        }
    return ok;
}

/* Everything after the checks of the input: the model, or a run and its report. */
static int run(const Chapter *ch, Options o, CsvOut *csv) {
    /* With --csv -, stdout carries the CSV alone and the readable report goes to stderr. */
    FILE *human = csv->f == stdout ? stderr : stdout;
    char msg[1024] = "";
    int rc;

    KernelModel m[MAX_KERNELS];
    memset(m, 0, sizeof(m)); /* a chapter may fill only some fields (setup stays 0) */
    int n = ch->models(&o, m);
    ReportContext ctx = {ch->id, "model", &o, NULL, ch->total_label, ch->features, NULL, ch->options};

    if (o.model_only) {
        fprintf(human, "chapter %s: %s\n", ch->id, ch->title);
        report_model(human, &ctx, m, n);
        if (ch->print_model_extra) ch->print_model_extra(human, &o, NULL);
        datasheet_print(human);
        return csv_write(csv, &ctx, m, NULL, n);
    }

    DeviceInfo dev;
    const int have_gpu = device_query(&dev);
    if (!have_gpu && require_gpu_env() && !o.cpu) {
        fprintf(stderr, "error: REQUIRE_GPU=1 is set but no CUDA device is usable\n");
        return 4;
    }

    KernelRun runs[MAX_KERNELS + 1];
    memset(runs, 0, sizeof(runs));
    const Options requested = o; /* what was asked for, before a CPU run at a smaller size */
    fprintf(human, "chapter %s: %s\n", ch->id, ch->title);

    if (!have_gpu || o.cpu) {
        if (!have_gpu) {
            fprintf(human, "no CUDA device found: this is the CPU version (host arrays stand in for HBM).\n"
                           "The model at the requested size:\n");
            report_model(human, &ctx, m, n);
            if (ch->print_model_extra) ch->print_model_extra(human, &o, NULL);
            if (!o.cpu && ch->shrink_for_cpu) {
                ch->shrink_for_cpu(&o);
                const long long rows = options_rows(&o, ch->options), asked = options_rows(&requested, ch->options);
                if (o.B != requested.B || o.H != requested.H || o.N != requested.N || rows != asked) {
                    ctx.requested = &requested;
                    memset(m, 0, sizeof(m));
                    n = ch->models(&o, m);
                    fprintf(human,
                            "\nRunning the CPU version at a smaller size instead: B=%d H=%d N=%d d=%d rows=%lld (asked: "
                            "B=%d H=%d N=%d rows=%lld; N keeps its remainder modulo the tiles, so a ragged last tile "
                            "stays ragged; every other option stays as given); pass --cpu to run it at the requested "
                            "size.\n",
                            o.B, o.H, o.N, o.d, rows, requested.B, requested.H, requested.N, asked);
                }
            }
        }
        if (!fits_in_host_memory(ch, &o, 1)) return 2;
        fprintf(human, "=== CPU version (not a GPU measurement: times are host wall clock, one run) ===\n");
        chapter_run_cpu(ch, &o, runs);
        ctx.gpu = "cpu";
        report_table(human, &ctx, m, runs, n);
        rc = csv_write(csv, &ctx, m, runs, n);
        if (o.save_dir) save_finish(human, ch, &o, &ctx, m, runs, n);
        if (save_failures()) rc = 2;
        return all_checks_pass(runs, n, m) ? rc : 1;
    }

    if (ch->validate(&o, &dev, msg, sizeof(msg))) {
        fprintf(stderr, "error: %s\n", msg);
        return 2;
    }
    if (!fits_in_memory(ch, &o)) return 2;
    if (!fits_in_host_memory(ch, &o, 0)) return 2;

    Ceilings ceil = device_ceilings(&dev);
    device_print(human, &dev, &ceil); /* the FP32 ceilings, before a chapter puts its own compute roof */
    if (ch->roof) ch->roof(human, &o, &dev, &ceil);
    if (ch->print_model_extra) ch->print_model_extra(human, &o, &dev);
    chapter_run_gpu(ch, &o, &dev, runs);
    ctx.gpu = dev.name;
    ctx.ceilings = &ceil;
    report_table(human, &ctx, m, runs, n);
    rc = csv_write(csv, &ctx, m, runs, n);
    if (o.save_dir) save_finish(human, ch, &o, &ctx, m, runs, n);
    if (save_failures()) rc = 2;
    return all_checks_pass(runs, n, m) ? rc : 1;
}

/* Everything from the command line on; the caller checks what was written to stdout. */
static int chapter_run(const Chapter *ch, int argc, char **argv) {
    char summary[512];
    snprintf(summary, sizeof(summary), "chapter %s: %s", ch->id, ch->title);
    const CommandLine cl = {summary, ch->features, ch->options, ch->default_br, ch->default_bc};
    Options o;
    int rc = options_parse(&o, argc, argv, &cl);
    if (rc == 1) return 0;
    if (rc) return 2;
    if (!o.dtype_given) o.dtype = ch->dtype_for ? ch->dtype_for(&o) : ch->default_dtype;

    char msg[1024] = "";
    if (ch->validate(&o, NULL, msg, sizeof(msg))) {
        fprintf(stderr, "error: %s\n", msg);
        return 2;
    }
    if (!counts_fit(ch, &o)) return 2;
    if (o.cpu && !fits_in_host_memory(ch, &o, 1)) return 2;

    CsvOut csv; /* before any work: a path that cannot be written is bad input like any other */
    if (!csv_open(&csv, o.csv_path)) return 2;
    if (o.save_dir) { /* the same: too much to save, or a directory that cannot be written */
        count_overflow_clear();
        const SavePlan plan = chapter_save_plan(ch, &o);
        if (!save_prepare(&o, ch->options, &plan)) {
            csv_close(&csv);
            return 2;
        }
    }
    rc = run(ch, o, &csv);
    if (csv_close(&csv)) rc = rc == 0 || rc == 1 ? 2 : rc;
    return rc;
}

int chapter_main(const Chapter *ch, int argc, char **argv) {
    int rc = chapter_run(ch, argc, argv);
    /* The report (or --help) that stdout could not take (a full disk, say): the run's results
     * did not arrive, and the program says so instead of exiting 0. */
    errno = 0;
    const int bad = fflush(stdout) != 0 || ferror(stdout);
    if (bad && !stdout_failed_said)
        fprintf(stderr, "error: cannot write to stdout: %s\n", strerror(errno ? errno : EIO));
    if (bad && (rc == 0 || rc == 1)) rc = 2;
    return rc;
}
