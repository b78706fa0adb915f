/* threads.c: run_on_threads (threads.h). */
#include "threads.h"

#include <pthread.h>

void run_on_threads(void *(*run)(void *), void *jobs, size_t size, int n) {
    pthread_t tid[THREADS_MAX];
    int started[THREADS_MAX] = {0};
    char *job = jobs;
    for (int x = 1; x < n && x < THREADS_MAX; x++)
        started[x] = pthread_create(&tid[x], NULL, run, job + (size_t)x * size) == 0;
    for (int x = 0; x < n; x++)
        if (x >= THREADS_MAX || !started[x]) run(job + (size_t)x * size);
    for (int x = 1; x < n && x < THREADS_MAX; x++)
        if (started[x]) pthread_join(tid[x], NULL);
}
