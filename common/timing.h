/* timing.h: one way to time a kernel in every chapter. CUDA events around each repetition, warm-up first,
 * the L2 cache flushed (overwritten with a buffer twice its size) between repetitions unless disabled, and
 * the median and minimum reported. */
#ifndef FA_TIMING_H
#define FA_TIMING_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    double median_ms;
    double min_ms;
    int reps;
} Timing;

/* Enqueues the work to be timed on the default stream. */
typedef void (*LaunchFn)(void *ctx);

/* Runs fn `warmup` times, then `reps` times with events around each run. flush_l2 != 0 overwrites the L2
 * between runs (outside the timed region). */
Timing time_launches(LaunchFn fn, void *ctx, int warmup, int reps, int flush_l2);

/* Host wall clock, for CPU versions. */
double wall_ms(void);

#ifdef __cplusplus
}
#endif
#endif
