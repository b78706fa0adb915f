/* threads.h: a list of independent jobs run on threads, for the host's long loops (random inputs, the float64
 * checks). Each job writes only its own output, so the result is the same as one pass over the jobs, whatever
 * number of threads ran. */
#pragma once

#include <stddef.h>

#define THREADS_MAX 64 /* jobs past this many run on the caller's thread */

/* run(jobs + x * size) for every x < n: job 0 on the caller's thread, each other on a thread of its own; a job
 * whose thread cannot be started (or past THREADS_MAX) runs on the caller's thread too. Returns when all have run. */
void run_on_threads(void *(*run)(void *), void *jobs, size_t size, int n);
