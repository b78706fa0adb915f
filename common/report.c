/* report.c: the model table, the measurement tables and the CSV rows of every chapter. */
#include "report.h"

#include <math.h>
#include <string.h>

#include "checked_math.h"

const char *const REPORT_CSV_HEADER =
    "chapter,kernel,gpu,B,H,N,d,dtype,flops,model_read_bytes,model_write_bytes,counted_read_bytes,"
    "counted_write_bytes,time_ms_median,time_ms_min,rel_err,max_abs_err,softmax_ops,ideal_read_bytes,"
    "ideal_write_bytes,rows,br,bc,causal,gemm,tflops,gbs_model,intensity,roofline_pct,ceiling_gbs,"
    "ceiling_tflops,setup,requested_B,requested_H,requested_N,requested_rows";

/* The products of every chapter but one are its own kernels'; that one says which with its option. */
const OptionColumn REPORT_OPTION_COLUMNS[] = {{"gemm", "own"}};
const int REPORT_OPTION_COLUMN_COUNT = (int)(sizeof(REPORT_OPTION_COLUMNS) / sizeof(REPORT_OPTION_COLUMNS[0]));

const char *report_option_column(const ChapterOption *declared, const Options *o, int k, char *buf, size_t len) {
    const int i = option_for_column(declared, REPORT_OPTION_COLUMNS[k].column);
    return i >= 0 ? option_text(o, declared, i, buf, len) : REPORT_OPTION_COLUMNS[k].absent;
}

/* NAME=VALUE of every declared option with `flag` (OPTION_SIZE: always; OPTION_SHOWN_IF_CHANGED: when it is not
 * the default). */
static void options_line(FILE *f, const ReportContext *ctx, const Options *o, unsigned flag) {
    for (int i = 0; i < options_count(ctx->options); i++) {
        const ChapterOption *c = &ctx->options[i];
        if (!(c->flags & flag)) continue;
        if (flag == OPTION_SHOWN_IF_CHANGED) {
            Options plain = *o;
            plain.chapter[i].set = 0;
            if (option_value(o, ctx->options, i) == option_value(&plain, ctx->options, i)) continue;
        }
        char buf[32];
        fprintf(f, " %s=%s", c->name, option_text(o, ctx->options, i, buf, sizeof(buf)));
    }
}

const char *fmt_bytes(unsigned long long v, char *buf, size_t len) {
    char digits[32];
    int n = snprintf(digits, sizeof(digits), "%llu", v);
    size_t j = 0;
    for (int i = 0; i < n && j + 1 < len; i++) {
        if (i > 0 && (n - i) % 3 == 0 && j + 2 < len) buf[j++] = ',';
        buf[j++] = digits[i];
    }
    buf[j] = '\0';
    return buf;
}

KernelModel model_total(const KernelModel *m, int n, const char *label) {
    KernelModel t;
    memset(&t, 0, sizeof(t));
    t.kernel = label;
    for (int i = 0; i < n; i++) {
        if (m[i].setup) continue;
        t.flops = count_add(t.flops, m[i].flops);
        t.softmax_ops = count_add(t.softmax_ops, m[i].softmax_ops);
        t.model = count_io_add(t.model, m[i].model);
        t.ideal = count_io_add(t.ideal, m[i].ideal);
    }
    return t;
}

void model_counts(const KernelModel *m, int n) {
    const KernelModel t = model_total(m, n, "total");
    for (int i = 0; i <= n; i++) {
        const KernelModel *k = i < n ? &m[i] : &t;
        count_io_total(k->model);
        count_io_total(k->ideal);
        count_add(k->flops, k->softmax_ops);
    }
}

static double intensity(const KernelModel *m) {
    unsigned long long bytes = io_total(m->model);
    return bytes ? ((double)m->flops + (double)m->softmax_ops) / (double)bytes : 0.0;
}

double roofline_pct(const KernelModel *m, double time_ms, const Ceilings *c) {
    if (!c || time_ms <= 0) return NAN;
    const double work = (double)m->flops + (double)m->softmax_ops;
    const double bound = fmin(c->fp32_tflops * 1e12, intensity(m) * c->hbm_gbs * 1e9);
    return bound > 0 ? 100.0 * (work / (time_ms * 1e-3)) / bound : NAN;
}

KernelRun report_total_run(const KernelModel *m, const KernelRun *runs, int n) {
    KernelRun t = runs[n];
    if (!t.have_time) {
        t.have_time = 1;
        t.time.median_ms = t.time.min_ms = 0;
        t.time.reps = 0;
        for (int i = 0; i < n; i++) {
            if (m[i].setup) continue;
            if (!runs[i].have_time) { t.have_time = 0; break; }
            t.time.median_ms += runs[i].time.median_ms;
            t.time.min_ms += runs[i].time.min_ms;
            t.time.reps = runs[i].time.reps;
        }
    }
    if (!t.have_check && n > 0) { /* a pipeline's output is its last kernel's */
        t.have_check = runs[n - 1].have_check;
        t.err = runs[n - 1].err;
        t.tol = runs[n - 1].tol;
    }
    if (!t.have_counted) {
        t.have_counted = n > 0;
        t.counted = io_bytes(0, 0);
        for (int i = 0; i < n; i++) {
            if (m[i].setup) continue;
            if (!runs[i].have_counted) { t.have_counted = 0; break; }
            t.counted = io_add(t.counted, runs[i].counted);
        }
    }
    return t;
}

static void header_line(FILE *f, const ReportContext *ctx) {
    const Options *o = ctx->opts;
    fprintf(f, "chapter %s on %s: B=%d H=%d N=%d d=%d %s", ctx->chapter, ctx->gpu, o->B, o->H, o->N, o->d,
            dtype_name(o->dtype));
    options_line(f, ctx, o, OPTION_SIZE);
    if (ctx->features & CLI_TILES) fprintf(f, " Br=%d Bc=%d", o->Br, o->Bc);
    if (o->causal) fprintf(f, " causal");
    options_line(f, ctx, o, OPTION_SHOWN_IF_CHANGED);
    if (ctx->requested) {
        const Options *r = ctx->requested;
        fprintf(f, " (reduced for the CPU from B=%d H=%d N=%d", r->B, r->H, r->N);
        options_line(f, ctx, r, OPTION_SIZE);
        fprintf(f, ")");
    }
    fprintf(f, "\n");
}

void report_model(FILE *f, const ReportContext *ctx, const KernelModel *m, int n) {
    char a[32], b[32], c[32], d[32], e[32];
    fprintf(f, "IO/FLOP model (bytes this code requests from global memory; compulsory = every input read "
               "once, every output written once)\n");
    header_line(f, ctx);
    fprintf(f, "%-18s %18s %18s %18s %18s %18s %14s %10s\n", "kernel", "model read", "model write",
            "compulsory read", "compulsory write", "compulsory total", "GFLOP", "FLOP/B");
    KernelModel t = model_total(m, n, ctx->total_label);
    for (int i = 0; i <= n; i++) {
        const KernelModel *k = i < n ? &m[i] : &t;
        if (i == n && !ctx->total_label) break;
        fprintf(f, "%-18s %18s %18s %18s %18s %18s %14.3f %10.2f%s\n", k->kernel, fmt_bytes(k->model.read, a, 32),
                fmt_bytes(k->model.write, b, 32), fmt_bytes(k->ideal.read, c, 32), fmt_bytes(k->ideal.write, d, 32),
                fmt_bytes(io_total(k->ideal), e, 32), k->flops / 1e9, intensity(k),
                i < n && k->setup ? "  (setup: not part of attention's bytes)" : "");
    }
    fprintf(f, "FLOPs: 4*B*H*N^2*d per attention forward (halved when causal); softmax work (%.4g ops) is not in "
               "GFLOP but is in FLOP/B\n",
            (double)t.softmax_ops);
}

void report_table(FILE *f, const ReportContext *ctx, const KernelModel *m, const KernelRun *runs, int n) {
    char a[32], b[32], c[32], d[32];
    header_line(f, ctx);
    KernelModel tm = model_total(m, n, ctx->total_label);
    KernelRun tr = report_total_run(m, runs, n);
    const int rows = ctx->total_label ? n + 1 : n;

    fprintf(f, "\n%-18s %18s %18s %18s %18s\n", "IO (bytes)", "model read", "counted read", "model write",
            "counted write");
    for (int i = 0; i < rows; i++) {
        const KernelModel *k = i < n ? &m[i] : &tm;
        const KernelRun *r = i < n ? &runs[i] : &tr;
        fprintf(f, "%-18s %18s %18s %18s %18s%s\n", k->kernel, fmt_bytes(k->model.read, a, 32),
                r->have_counted ? fmt_bytes(r->counted.read, b, 32) : "-", fmt_bytes(k->model.write, c, 32),
                r->have_counted ? fmt_bytes(r->counted.write, d, 32) : "-",
                r->have_counted && (r->counted.read != k->model.read || r->counted.write != k->model.write)
                    ? "  <- counted != model"
                    : i < n && k->setup ? "  (setup: not part of attention's bytes)" : "");
    }

    fprintf(f, "\n%-18s %10s %10s %9s %9s %8s %8s %11s %10s %s\n", "time", "median ms", "min ms", "TFLOP/s",
            "GB/s", "FLOP/B", "% roof", "rel err", "max err", "check");
    for (int i = 0; i < rows; i++) {
        const KernelModel *k = i < n ? &m[i] : &tm;
        const KernelRun *r = i < n ? &runs[i] : &tr;
        if (r->have_time) {
            const double s = r->time.median_ms * 1e-3;
            const double pct = roofline_pct(k, r->time.median_ms, ctx->ceilings);
            fprintf(f, "%-18s %10.4f %10.4f %9.2f %9.1f %8.2f ", k->kernel, r->time.median_ms, r->time.min_ms,
                    k->flops / s / 1e12, io_total(k->model) / s / 1e9, intensity(k));
            if (isnan(pct)) fprintf(f, "%8s ", "-");
            else fprintf(f, "%7.1f%% ", pct);
        } else {
            fprintf(f, "%-18s %10s %10s %9s %9s %8.2f %8s ", k->kernel, "-", "-", "-", "-", intensity(k), "-");
        }
        if (r->have_check)
            fprintf(f, "%11.3e %10.3e %s\n", r->err.rel, r->err.max_abs,
                    error_ok(&r->err, r->tol) ? "ok" : "FAILED");
        else
            fprintf(f, "%11s %10s %s\n", "-", "-", "not checked");
    }
    if (ctx->ceilings && ctx->ceilings->roof_what)
        fprintf(f, "%% roof = achieved / min(%s %.0f TFLOP/s, FLOP/B x HBM %.0f GB/s (measured)); GB/s on model bytes\n",
                ctx->ceilings->roof_what, ctx->ceilings->fp32_tflops, ctx->ceilings->hbm_gbs);
    else if (ctx->ceilings && ctx->ceilings->tensor_cores)
        fprintf(f, "%% roof = achieved / min(fp16 tensor-core peak %.0f TFLOP/s (datasheet, dense), FLOP/B x HBM "
                   "%.0f GB/s (measured)); GB/s on model bytes\n",
                ctx->ceilings->fp32_tflops, ctx->ceilings->hbm_gbs);
    else if (ctx->ceilings)
        fprintf(f, "%% roof = achieved / min(FP32 peak %.1f TFLOP/s, FLOP/B x HBM %.0f GB/s), both measured; "
                   "GB/s on model bytes\n",
                ctx->ceilings->fp32_tflops, ctx->ceilings->hbm_gbs);
}

static void csv_row(FILE *f, const ReportContext *ctx, const KernelModel *k, const KernelRun *r) {
    const Options *o = ctx->opts;
    fprintf(f, "%s,%s,%s,%d,%d,%d,%d,%s,%llu,%llu,%llu,", ctx->chapter, k->kernel, ctx->gpu, o->B, o->H, o->N,
            o->d, dtype_name(o->dtype), k->flops, k->model.read, k->model.write);
    if (r && r->have_counted) fprintf(f, "%llu,%llu,", r->counted.read, r->counted.write);
    else fprintf(f, ",,");
    if (r && r->have_time) fprintf(f, "%.6f,%.6f,", r->time.median_ms, r->time.min_ms);
    else fprintf(f, ",,");
    if (r && r->have_check) fprintf(f, "%.6e,%.6e,", r->err.rel, r->err.max_abs);
    else fprintf(f, ",,");
    fprintf(f, "%llu,%llu,%llu,%lld,%d,%d,%d,", k->softmax_ops, k->ideal.read, k->ideal.write,
            options_rows(o, ctx->options), o->Br, o->Bc, o->causal);
    for (int c = 0; c < REPORT_OPTION_COLUMN_COUNT; c++) {
        char buf[32];
        fprintf(f, "%s,", report_option_column(ctx->options, o, c, buf, sizeof(buf)));
    }
    if (r && r->have_time) {
        const double s = r->time.median_ms * 1e-3;
        fprintf(f, "%.4f,%.2f,", k->flops / s / 1e12, io_total(k->model) / s / 1e9);
    } else fprintf(f, ",,");
    fprintf(f, "%.4f,", intensity(k));
    const double pct = r && r->have_time ? roofline_pct(k, r->time.median_ms, ctx->ceilings) : NAN;
    if (!isnan(pct)) fprintf(f, "%.2f,", pct);
    else fprintf(f, ",");
    if (ctx->ceilings) fprintf(f, "%.1f,%.2f,", ctx->ceilings->hbm_gbs, ctx->ceilings->fp32_tflops);
    else fprintf(f, ",,");
    const Options *req = ctx->requested ? ctx->requested : o;
    fprintf(f, "%d,%d,%d,%d,%lld\n", k->setup, req->B, req->H, req->N, options_rows(req, ctx->options));
}

void report_csv(FILE *f, const ReportContext *ctx, const KernelModel *m, const KernelRun *runs, int n,
                int header) {
    if (header) fprintf(f, "%s\n", REPORT_CSV_HEADER);
    for (int i = 0; i < n; i++) csv_row(f, ctx, &m[i], runs ? &runs[i] : NULL);
    if (ctx->total_label) {
        KernelModel tm = model_total(m, n, ctx->total_label);
        KernelRun tr;
        if (runs) tr = report_total_run(m, runs, n);
        csv_row(f, ctx, &tm, runs ? &tr : NULL);
    }
}

void resources_print(FILE *f, const DeviceInfo *dev, const KernelResources *r, long long grid_blocks) {
    char a[32], b[32];
    const int warps = r->threads / 32, max_warps = dev->max_threads_per_sm / 32;
    const int resident = r->blocks_per_sm * dev->sms;
    fprintf(f, "on this GPU (%s, %d SMs): %d registers per thread, %d B of local memory (spills), %s B of shared "
               "memory per block\n",
            dev->name, dev->sms, r->regs, r->local_bytes, fmt_bytes(r->smem_bytes, a, 32));
    fprintf(f, "  theoretical occupancy: %d blocks per SM x %d warps = %d of %d warps (%.1f%%); the grid's %s blocks "
               "take %lld wave(s) of %d\n",
            r->blocks_per_sm, warps, r->blocks_per_sm * warps, max_warps, 100.0 * r->blocks_per_sm * warps / max_warps,
            fmt_bytes((unsigned long long)grid_blocks, b, 32),
            resident ? (grid_blocks + resident - 1) / resident : 0, resident);
}
