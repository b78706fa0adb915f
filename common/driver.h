/* driver.h: the driver every chapter's program shares, so that a chapter's own files hold only its
 * kernels, its IO model, its CPU version and its checks.
 *
 *   ./chNN/run [options]   parse -> (--model: print the model, exit) -> GPU or CPU run -> table (+ CSV)
 *
 * Exit status: 0 success; 1 a result failed its check against the float64 reference; 2 bad input (the
 * message says which), or output that could not be written (stdout, --csv, --save: a full disk, say); 3 a CUDA
 * error; 4 REQUIRE_GPU=1 was set and no CUDA device was found. */
#ifndef FA_DRIVER_H
#define FA_DRIVER_H

#include <stddef.h>
#include <stdio.h>

#include "attention.h"
#include "device.h"
#include "options.h"
#include "report.h"
#include "save.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    const char *id;        /* "00"                                             */
    const char *title;     /* one line, shown by --help and atop every report  */
    unsigned features;     /* CLI_* common options this chapter accepts        */
    /* The chapter's own options (options.h), ended by an entry without a name; NULL: none. */
    const ChapterOption *options;
    DType default_dtype;   /* the storage type without --dtype (DTYPE_FP32 unless set) */
    /* Optional: the storage type without --dtype where it depends on the chapter's options (o as parsed: a step
     * that stores fp16 beside steps that store fp32); NULL: default_dtype. */
    DType (*dtype_for)(const Options *o);
    int default_br, default_bc; /* tiles without --br, --bc (0: the article's 32 x 32), where no option picks them */
    /* The report's row that sums the kernels ("total": they run one after another, a pipeline, or alone);
     * NULL: no such row (the kernels are alternatives). */
    const char *total_label;
    /* Optional: the chapter's own compute roof for the roofline, set in *c from what this device offers
     * (device.h) and what the run computes with (o: a chapter whose steps use different units), with a line on f
     * that says what it is. */
    void (*roof)(FILE *f, const Options *o, const DeviceInfo *dev, Ceilings *c);

    /* Chapter-specific validation beyond the common checks (sizes >= 1). dev is NULL when no GPU is used
     * (then check only what does not depend on the device). Returns 0, or writes a message and returns 2. */
    int (*validate)(const Options *o, const DeviceInfo *dev, char *msg, size_t len);

    /* Fills m[0..n-1] (n <= MAX_KERNELS) with each kernel's closed-form model; returns n. */
    int (*models)(const Options *o, KernelModel *m);

    /* Optional: chapter-specific lines under the --model table (grid sizes, shared memory budget). */
    void (*print_model_extra)(FILE *f, const Options *o, const DeviceInfo *dev);

    /* A FlashAttention chapter names its kernels and CPU version here, and common/attention.c runs them; the
     * three functions below are then left out. */
    const AttnChapter *attention;
    /* Where the kernels depend on one of the chapter's word options: its name; attention then holds one table
     * per word, in the option's order. NULL: attention is one table. */
    const char *attention_by;

    /* Device memory the GPU run allocates, checked against the free memory before allocating. */
    size_t (*device_bytes)(const Options *o);

    /* Host memory the CPU run (cpu != 0) or the GPU run allocates at most, checked against MemAvailable before
     * allocating (checked_math.h's checked arithmetic). */
    size_t (*host_bytes)(const Options *o, int cpu);

    /* Runs every kernel on the GPU: times the timed build, runs the instrumented build once for counted
     * bytes, checks against the reference (unless o->no_check). runs has n + 1 entries (see report.h). */
    void (*run_gpu)(const Options *o, const DeviceInfo *dev, KernelRun *runs);

    /* The same computation on the CPU, counting its IO the same way; wall-clock time, one repetition. */
    void (*run_cpu)(const Options *o, KernelRun *runs);

    /* Shrinks *o to a size the CPU version finishes in about a second (used when no GPU is present). */
    void (*shrink_for_cpu)(Options *o);

    /* What --save writes (save.h): SAVE_ATTENTION (the default: Q, K, V, O, L), SAVE_STANDARD (and S, P),
     * SAVE_ROWS (x and y), SAVE_GRADIENTS (Q, K, V, O, L and dO, dQ, dK, dV). The chapter's runs write the arrays;
     * chapter_main checks the plan before any work and writes run.json after the report. */
    SaveKind save;
} Chapter;

int chapter_main(const Chapter *ch, int argc, char **argv);

/* The chapter's attention table for these options (attention, or its entry for the option attention_by; NULL
 * where the chapter has none). */
const AttnChapter *chapter_attention(const Chapter *ch, const Options *o);

/* The chapter's runs, through its attention table where it has one (what chapter_main calls; tests too). */
size_t chapter_device_bytes(const Chapter *ch, const Options *o);
size_t chapter_host_bytes(const Chapter *ch, const Options *o, int cpu);
void chapter_run_gpu(const Chapter *ch, const Options *o, const DeviceInfo *dev, KernelRun *runs);
void chapter_run_cpu(const Chapter *ch, const Options *o, KernelRun *runs);

/* The files --save writes for a run of o (the kernels' names from ch->models). */
SavePlan chapter_save_plan(const Chapter *ch, const Options *o);

/* 1 when the environment sets REQUIRE_GPU (to anything but 0): a missing CUDA device is then an error. */
int require_gpu_env(void);

#ifdef __cplusplus
}
#endif
#endif
