/* report.h: the table on stdout and the CSV rows that every chapter prints.
 *
 * FLOP convention (one for the whole book): an attention forward is 4*B*H*N^2*d FLOPs (two matrix products of
 * 2*N^2*d each per head), halved when causal. Softmax work (max, subtract, exp, sum, scale) is reported
 * separately as softmax_ops and not counted in TFLOP/s. The roofline places a kernel at intensity
 * (flops + softmax_ops) / model bytes. */
#ifndef FA_REPORT_H
#define FA_REPORT_H

#include <stdio.h>

#include "device.h"
#include "io_bytes.h"
#include "options.h"
#include "reference.h"
#include "timing.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MAX_KERNELS 8

typedef struct {
    const char *kernel; /* short name, the report's row                                    */
    unsigned long long flops;       /* matrix-product FLOPs of this kernel under the convention above */
    unsigned long long softmax_ops; /* softmax work, reported separately                              */
    IoBytes model;      /* closed form of what this code requests from global memory       */
    IoBytes ideal;      /* compulsory traffic: every input read once, every output once    */
    int setup;          /* 1: preparation outside the algorithm measured (like the article's torch.zeros
                           before its kernel): shown in every table, left out of the total row           */
} KernelModel;

typedef struct {
    int have_time;
    Timing time;
    int have_counted;
    IoBytes counted;
    int have_check;
    ErrorStats err;
    double tol; /* rel_err threshold the check used */
} KernelRun;

typedef struct {
    const char *chapter;     /* "00"                                        */
    const char *gpu;         /* device name, or "cpu"                        */
    const Options *opts;
    const Ceilings *ceilings; /* NULL on the CPU                             */
    const char *total_label; /* "total" row name, NULL for no total row      */
    unsigned features;       /* the chapter's CLI_* options: what the header line shows */
    const Options *requested; /* the size asked for, where the CPU version ran a smaller one (the header line
                                 and the requested_* columns say so); NULL: opts is what was asked for */
    const ChapterOption *options; /* the chapter's declared options (the header line, the option columns) */
} ReportContext;

/* The option columns: columns of every chapter's CSV (and keys of run.json's "options") that a chapter's
 * declared option of that column fills (ChapterOption.column); a chapter without one writes `absent`, what
 * its runs do. (The rows column is options_rows.) */
typedef struct {
    const char *column, *absent;
} OptionColumn;
extern const OptionColumn REPORT_OPTION_COLUMNS[];
extern const int REPORT_OPTION_COLUMN_COUNT;
/* Option column k's value for o. */
const char *report_option_column(const ChapterOption *declared, const Options *o, int k, char *buf, size_t len);

/* Prints the model alone (the --model output): per kernel, model and compulsory bytes, FLOPs, intensity. */
void report_model(FILE *f, const ReportContext *ctx, const KernelModel *m, int n);

/* Prints the measurement table. runs has n + 1 entries: runs[n] is the total row's (its time, counted bytes
 * or check; where unset, the sum of the kernels' is used, setup rows left out). */
void report_table(FILE *f, const ReportContext *ctx, const KernelModel *m, const KernelRun *runs, int n);

/* CSV: a header line (when header != 0), one row per kernel and the total row. Bytes are exact integers;
 * columns that were not measured are empty. Column order (stable; scripts and plots rely on it):
 * chapter,kernel,gpu,B,H,N,d,dtype,flops,model_read_bytes,model_write_bytes,counted_read_bytes,
 * counted_write_bytes,time_ms_median,time_ms_min,rel_err,max_abs_err,softmax_ops,ideal_read_bytes,
 * ideal_write_bytes,rows,br,bc,causal,gemm,tflops,gbs_model,intensity,roofline_pct,ceiling_gbs,ceiling_tflops,
 * setup (1: a setup row, not in a total),requested_B,requested_H,requested_N,requested_rows (the size asked
 * for: B, H, N, rows again unless the CPU version ran a smaller one) */
void report_csv(FILE *f, const ReportContext *ctx, const KernelModel *m, const KernelRun *runs, int n,
                int header);
extern const char *const REPORT_CSV_HEADER;

/* The total row's run: runs[n] where the chapter set it, else the kernels' sums (setup rows left out) and the
 * last kernel's check. */
KernelRun report_total_run(const KernelModel *m, const KernelRun *runs, int n);

/* The total row's model: the sum of the kernels' (setup rows left out), in checked_math.h's checked arithmetic. */
KernelModel model_total(const KernelModel *m, int n, const char *label);

/* Computes every count the tables and the CSV print from m (each row's read + write, the total row's) in
 * checked_math.h's checked arithmetic: afterwards count_overflowed() says whether one of them does not fit. */
void model_counts(const KernelModel *m, int n);

/* Roofline bound for a kernel: min(peak, intensity * bandwidth), in FLOP/s, and the % of it achieved. */
double roofline_pct(const KernelModel *m, double time_ms, const Ceilings *c);

/* Two lines: registers, spills and shared memory of a kernel; its theoretical occupancy and the waves its
 * grid of `grid_blocks` blocks takes on this GPU. */
void resources_print(FILE *f, const DeviceInfo *dev, const KernelResources *r, long long grid_blocks);

/* "11,240,734,720" style formatting of a byte count into buf. */
const char *fmt_bytes(unsigned long long v, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
