/* checked_math.c: the flag of checked_math.h. */
#include "checked_math.h"

static int overflowed;

void count_overflow_clear(void) { overflowed = 0; }
void count_overflow_raise(void) { overflowed = 1; }
int count_overflowed(void) { return overflowed; }
