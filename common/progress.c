/* progress.c: the progress lines of progress.h. */
#include "progress.h"

#include <stdio.h>
#include <stdlib.h>

#include "timing.h"

#define PROGRESS_EVERY_MS 2000.0

void progress_begin(Progress *p, const char *what) {
    const char *env = getenv("PROGRESS_AFTER");
    char *end = NULL;
    const double after_s = env && *env ? strtod(env, &end) : 2.0;
    p->what = what;
    p->t0_ms = wall_ms();
    p->after_ms = (end && *end) || after_s < 0 ? 2000.0 : 1000.0 * after_s;
    p->next_ms = p->t0_ms + p->after_ms;
    p->shown = 0;
}

void progress_update(Progress *p, double done, double total) {
    const double now = wall_ms();
    if (now < p->next_ms || total <= 0) return;
    fprintf(stderr, "progress: %s: %.0f%% after %.1f s\n", p->what, 100.0 * done / total, (now - p->t0_ms) / 1000.0);
    fflush(stderr);
    p->shown = 1;
    p->next_ms = now + (p->after_ms > 0 ? PROGRESS_EVERY_MS : 0);
}

void progress_end(Progress *p) {
    if (p->shown) fprintf(stderr, "progress: %s: 100%% after %.1f s\n", p->what, (wall_ms() - p->t0_ms) / 1000.0);
}
