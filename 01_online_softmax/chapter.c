/* chapter.c: chapter 01, online softmax: three passes, two passes, and the (m, l) merge.
 *
 *   ./ch01/run --seq N --rows R        rows of length N (default: the article's S, B*H*N rows of N = 1024)
 *   ./ch01/run --model --seq N --rows R
 *
 * Kernels: softmax_3pass, softmax_online, softmax_blockwise (kernels.cu); CPU versions in cpu.c; closed-form
 * IO in model.c. The three are alternatives, not a pipeline: there is no total row. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "ch01.h"
#include "host_tensor.h"
#include "progress.h"
#include "kernels.h"
#include "timing.h"

static int validate(const Options *o, const DeviceInfo *dev, char *msg, size_t len) {
    (void)dev;
    const long long R = ch01_rows(o);
    /* (Counts that do not fit in 64 bits are rejected by chapter_main, as in every chapter.) */
    const long long blocks = R > INT_MAX ? LLONG_MAX : R * blockwise_chunks(o->N, BLOCKWISE_CHUNK);
    if (R > INT_MAX || blocks > INT_MAX) {
        snprintf(msg, len,
                 "--rows %lld needs %lld thread blocks in one launch (softmax_blockwise: %d per row); the limit is "
                 "%d: use fewer rows",
                 R, blocks, blockwise_chunks(o->N, BLOCKWISE_CHUNK), INT_MAX);
        return 2;
    }
    return 0;
}

/* About a second of CPU time: at most CPU_RUN_ELEMENTS elements, keeping the row length; a row longer than
 * that is shortened keeping its remainder modulo the blockwise chunk (a ragged last chunk stays ragged). */
#define CPU_RUN_ELEMENTS (1 << 22)
static void shrink_for_cpu(Options *o) {
    o->N = shrink_seq_keeping_tiles(o->N, CPU_RUN_ELEMENTS, BLOCKWISE_CHUNK);
    const long long fit = CPU_RUN_ELEMENTS / o->N;
    const long long rows = fit < 1 ? 1 : fit;
    if (ch01_rows(o) > rows) option_assign(o, CH01_OPT_ROWS, rows);
}

static void run_cpu(const Options *o, KernelRun *runs) {
    const long long R = ch01_rows(o);
    const int N = o->N;
    const size_t elements = (size_t)R * N;
    const size_t pairs = (size_t)R * blockwise_chunks(N, BLOCKWISE_CHUNK);
    ScorePool pool = score_pool(o->seed);
    float *x = (float *)host_alloc(sizeof(float) * elements, "the scores x");
    float *y = (float *)host_alloc(sizeof(float) * elements, "the output y");
    float *ml = (float *)host_alloc(sizeof(float) * 2 * pairs, "the (m, l) pairs");
    score_pool_fill(&pool, 0, elements, x);
    if (o->save_dir) ch01_save_x(o, &pool);

    Progress p;
    progress_begin(&p, "the three softmaxes on the CPU");
    for (int k = 0; k < CH01_KERNELS; k++) {
        KernelRun *run = &runs[k];
        IoBytes io = {0, 0};
        memset(y, 0xFF, sizeof(float) * elements); /* NaN: an element left unwritten fails the check */
        const double t0 = wall_ms();
        softmax_cpu(k, x, y, ml, R, N, BLOCKWISE_CHUNK, &io);
        const double ms = wall_ms() - t0;
        run->time.median_ms = run->time.min_ms = ms;
        run->time.reps = 1;
        run->have_time = 1;
        run->counted = io;
        run->have_counted = 1;
        if (!o->no_check) {
            run->err = check_rows_host(&pool, y, R, N);
            const size_t bad = count_nonfinite(y, elements);
            if (bad > run->err.nonfinite) run->err.nonfinite = bad;
            run->err.rel = error_stats_rel(&run->err);
            run->tol = CH01_TOL;
            run->have_check = 1;
        }
        if (o->save_dir) ch01_save_y(o, k, NULL, y);
        progress_update(&p, k + 1, CH01_KERNELS);
    }
    progress_end(&p);
    free(x);
    free(y);
    free(ml);
    score_pool_free(&pool);
}

/* Without --rows: one row per query of the article's problem, B*H*N (the rows of its S). */
static long long rows_default(const Options *o) { return (long long)o->B * o->H * o->N; }

const ChapterOption ch01_options[] = {
    [CH01_OPT_ROWS] = {.name = "rows",
                       .metavar = "R",
                       .default_number = rows_default,
                       .help = "rows of length --seq          (default B*H*N)",
                       .column = "rows",
                       .flags = OPTION_SIZE},
    {0}};

const Chapter chapter01 = {
    .id = "01",
    .title = "online softmax: three passes, two passes, and the (m, l) merge",
    .options = ch01_options,
    .validate = validate,
    .models = ch01_models,
    .print_model_extra = ch01_print_model_extra,
    .device_bytes = ch01_device_bytes,
    .host_bytes = ch01_host_bytes,
    .run_gpu = ch01_run_gpu,
    .run_cpu = run_cpu,
    .shrink_for_cpu = shrink_for_cpu,
    .save = SAVE_ROWS,
};
