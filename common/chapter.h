/* chapter.h: the driver every chapter's program shares, so that a chapter's own files hold only its
 * kernels, its IO model, its CPU version and its checks.
 *
 *   ./chNN/run [options]   parse -> (--model: print the model, exit) -> GPU or CPU run -> table (+ CSV)
 *
 * Exit status: 0 success; 1 a result failed its check against the float64 reference; 2 bad input (the
 * message says which); 3 a CUDA error; 4 REQUIRE_GPU=1 was set and no CUDA device was found. */
#ifndef FA_CHAPTER_H
#define FA_CHAPTER_H

#include <stddef.h>
#include <stdio.h>

#include "device.h"
#include "options.h"
#include "report.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    const char *id;        /* "00"                                             */
    const char *title;     /* one line, shown by --help and atop every report  */
    unsigned features;     /* CLI_* options this chapter accepts               */
    int has_total_row;     /* 1: kernels run one after another (a pipeline) or alone; a "total" row sums them */

    /* Chapter-specific validation beyond the common checks (sizes >= 1). dev is NULL when no GPU is used
     * (then check only what does not depend on the device). Returns 0, or writes a message and returns 2. */
    int (*validate)(const Options *o, const DeviceInfo *dev, char *msg, size_t len);

    /* Fills m[0..n-1] (n <= MAX_KERNELS) with each kernel's closed-form model; returns n. */
    int (*models)(const Options *o, KernelModel *m);

    /* Optional: chapter-specific lines under the --model table (grid sizes, shared memory budget). */
    void (*print_model_extra)(FILE *f, const Options *o, const DeviceInfo *dev);

    /* Device memory the GPU run allocates, checked against the free memory before allocating. */
    size_t (*device_bytes)(const Options *o);

    /* Runs every kernel on the GPU: times the timed build, runs the instrumented build once for counted
     * bytes, checks against the reference (unless o->no_check). runs has n + 1 entries (see report.h). */
    void (*run_gpu)(const Options *o, const DeviceInfo *dev, KernelRun *runs);

    /* The same computation on the CPU, counting its IO the same way; wall-clock time, one repetition. */
    void (*run_cpu)(const Options *o, KernelRun *runs);

    /* Shrinks *o to a size the CPU version finishes in about a second (used when no GPU is present). */
    void (*shrink_for_cpu)(Options *o);
} Chapter;

int chapter_main(const Chapter *ch, int argc, char **argv);

/* Shared by chapter tests: 1 when a CUDA device is usable. With REQUIRE_GPU=1 and none, prints why and
 * returns 0 so that the caller's assertion fails; tests skip with cr_skip_test otherwise. */
int gpu_available(void);
int gpu_required(void);

#ifdef __cplusplus
}
#endif
#endif
