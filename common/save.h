/* save.h: --save DIR, one option of every chapter: the run's inputs and outputs as NumPy .npy files (npy.h) and
 * a run.json, so that a run can be checked elsewhere (README: "Checking a run elsewhere: --save").
 *
 *   attention        Q, K, V, O [B, H, N, d] and L [B, H, N] (natural-log log-sum-exp of each row's scaled
 *                    scores; computed on the host where the kernels leave other statistics)
 *   standard         Q, K, V, O [B, H, N, d], and S, P [B, H, N, N] when they fit under the limit too
 *   gradients        attention's, and the backward's: dO, the upstream gradient, and dQ, dK, dV [B, H, N, d]
 *   rows             x, its input rows, and y_KERNEL, each kernel's output rows, [rows, N]
 *
 * Elements in the storage type: fp32 '<f4', fp16 '<f2', bf16 '<u2' (the raw bits; run.json says so). What is
 * saved is what the GPU computed (the checked forward pass, after the timed runs), or the CPU version's output
 * on a machine without a GPU; run.json's "computed_on" says which.
 *
 * Before any work, chapter_main checks the plan (save_plan) against --save-max and the free disk space, and that
 * DIR can be created and written (save_prepare): a run that cannot save exits 2 like any bad input. */
#ifndef FA_SAVE_H
#define FA_SAVE_H

#include <stddef.h>

#include "npy.h"
#include "options.h"
#include "report.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a chapter's run computes, for the plan. */
typedef enum {
    SAVE_ATTENTION, /* Q, K, V, O and L                                      */
    SAVE_STANDARD,  /* Q, K, V, O; S and P where they fit                    */
    SAVE_ROWS,      /* x and one y per kernel, [rows, N]                     */
    SAVE_GRADIENTS, /* Q, K, V, O and L; dO, dQ, dK and dV                   */
} SaveKind;

#define SAVE_MAX_ARRAYS 9

typedef struct {
    char name[48]; /* the file is DIR/name.npy */
    const char *dtype; /* "fp32", "fp16", "bf16" */
    int ndim;
    long long shape[4];
    unsigned long long bytes; /* header and data */
} SaveArray;

typedef struct {
    int n;
    SaveArray a[SAVE_MAX_ARRAYS];
    unsigned long long bytes;         /* every file above (run.json aside) */
    unsigned long long left_out_bytes; /* SAVE_STANDARD: S and P, left out because they would pass the limit */
    SaveKind kind;
} SavePlan;

/* The storage type as NumPy names it: descr "<f4", "<f2" or "<u2" (bf16: raw bits), element size, and a note
 * for run.json (NULL where NumPy reads the type as it is). NULL descr: an unknown name. */
typedef struct {
    const char *descr;
    size_t size;
    const char *note;
} SaveStorage;
SaveStorage save_storage(const char *dtype);

/* The files a run of o writes. rows: the problem's rows (options_rows; SAVE_ROWS's first dimension); outputs: the
 * kernels' names (SAVE_ROWS: one y file each). */
SavePlan save_plan(SaveKind kind, const Options *o, long long rows, const char *const *outputs, int noutputs);
/* 1 when the plan's array is there ("S"), else 0. */
int save_plan_has(const SavePlan *p, const char *name);

/* Before any work: plan within o->save_max and the free space of DIR's file system, DIR created where missing
 * (with its parents) and writable. Returns 1, or prints why not (naming --save or --save-max, and the options
 * that make the problem smaller, the chapter's declared sizes among them) and returns 0. */
int save_prepare(const Options *o, const ChapterOption *declared, const SavePlan *plan);

/* One array from float host data, converted to the storage type dtype, as DIR/name.npy. Piece by piece:
 * save_open, save_floats (n elements at a time, in order), save_close; or save_array at once. Each returns 1,
 * or prints the reason, counts a failure (save_failures) and returns 0. */
typedef struct {
    NpyWriter w;
    SaveStorage st;
    int ok;
} SaveFile;
int save_open(SaveFile *s, const Options *o, const char *name, const char *dtype, int ndim, const long long *shape);
int save_floats(SaveFile *s, const float *x, size_t n);
int save_close(SaveFile *s);
int save_array(const Options *o, const char *name, const char *dtype, int ndim, const long long *shape,
               const float *x);
/* Shapes of every chapter's arrays. */
void save_shape_bhnd(const Options *o, long long shape[4]); /* [B, H, N, d] */
void save_shape_bhn(const Options *o, long long shape[3]);  /* [B, H, N]    */
/* Q, K and V ([B, H, N, d], the run's storage type): the first arrays of every chapter's --save. */
int save_inputs(const Options *o, const float *Q, const float *K, const float *V);
/* Q, K, V and O ([B, H, N, d], the storage type) and L ([B, H, N], fp32): SAVE_ATTENTION's arrays, and the first of
 * SAVE_GRADIENTS's. */
int save_attention(const Options *o, const float *Q, const float *K, const float *V, const float *O, const float *L);

/* Writes that failed since the program started (the driver then exits 2). */
int save_failures(void);

/* run.json: what ran and on what, the options, and the report's numbers for each row. */
typedef struct {
    const char *chapter, *title;
    const char *gpu;         /* the device's name, or "cpu" */
    const ChapterOption *options; /* the chapter's declared options (OPTION_RECORDED ones, the rows, the option
                                     columns) */
    const Options *opts;     /* what ran */
    const Options *requested; /* what was asked for, where the CPU version ran a smaller size; else NULL */
    const SavePlan *plan;
    const KernelModel *m;
    const KernelRun *runs;   /* n + 1 entries, as report_table takes them */
    int n;
    const char *total_label; /* NULL: no total row */
} SaveRunInfo;
int save_run_json(const SaveRunInfo *r);

#ifdef __cplusplus
}
#endif
#endif
