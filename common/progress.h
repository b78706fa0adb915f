/* progress.h: a progress line on stderr for CPU runs that take long.
 *
 * Nothing is printed for a run that finishes within PROGRESS_AFTER seconds (2 by default; the environment
 * variable PROGRESS_AFTER sets another number of seconds, 0: from the start); after that, a line
 *     progress: KERNEL on the CPU: 37% after 5.1 s
 * at most every 2 seconds, and a last one at 100%. */
#ifndef FA_PROGRESS_H
#define FA_PROGRESS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    const char *what;
    double t0_ms, after_ms, next_ms;
    int shown;
} Progress;

void progress_begin(Progress *p, const char *what);
/* done of total units of work are finished. */
void progress_update(Progress *p, double done, double total);
/* The last line (100%), where any was shown. */
void progress_end(Progress *p);

#ifdef __cplusplus
}
#endif
#endif
