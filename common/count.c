/* count.c: the flag of count.h. */
#include "count.h"

static int overflowed;

void count_overflow_clear(void) { overflowed = 0; }
void count_overflow_raise(void) { overflowed = 1; }
int count_overflowed(void) { return overflowed; }
