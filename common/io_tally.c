/* io_tally.c: the program's byte counters, one pair per instrumented translation unit (io_tally.cuh). */
#include <stdio.h>
#include <stdlib.h>

#include "io_bytes.h"

#define IO_COUNTERS_MAX 32

static struct {
    void (*reset)(void);
    IoBytes (*read)(void);
} counters[IO_COUNTERS_MAX];
static int ncounters;

int io_counter_register(void (*reset)(void), IoBytes (*read)(void)) {
    if (ncounters == IO_COUNTERS_MAX) {
        fprintf(stderr, "io_counter_register: more than %d instrumented files in one program\n", IO_COUNTERS_MAX);
        exit(3);
    }
    counters[ncounters].reset = reset;
    counters[ncounters].read = read;
    return ++ncounters;
}

void io_counter_reset(void) {
    for (int k = 0; k < ncounters; k++) counters[k].reset();
}

IoBytes io_counter_read(void) {
    IoBytes sum = io_bytes(0, 0);
    for (int k = 0; k < ncounters; k++) sum = io_add(sum, counters[k].read());
    return sum;
}
