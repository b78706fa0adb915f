/* checked_math.h: byte and FLOP counts in exact 64-bit integer arithmetic (host code).
 *
 * Every count the book prints (model and compulsory bytes, FLOPs, softmax work, the memory a run needs) is
 * computed with these helpers. A product or sum that does not fit in 64 bits is never wrapped: the helper
 * returns COUNT_LIMIT and raises a flag, and chapter_main rejects the size (exit 2) when the flag is up after
 * it has computed every count of the problem. So a count that is printed is exact. */
#ifndef FA_CHECKED_MATH_H
#define FA_CHECKED_MATH_H

#include <limits.h>

#include "io_bytes.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The largest count: 2^64 - 1. */
#define COUNT_LIMIT ULLONG_MAX
#define COUNT_LIMIT_TEXT "2^64 - 1 = 18,446,744,073,709,551,615"

/* The flag: raised by a helper whose result did not fit, cleared by count_overflow_clear. */
void count_overflow_clear(void);
void count_overflow_raise(void);
int count_overflowed(void);

static inline unsigned long long count_mul(unsigned long long a, unsigned long long b) {
    unsigned long long r;
    if (__builtin_mul_overflow(a, b, &r)) {
        count_overflow_raise();
        return COUNT_LIMIT;
    }
    return r;
}

static inline unsigned long long count_add(unsigned long long a, unsigned long long b) {
    unsigned long long r;
    if (__builtin_add_overflow(a, b, &r)) {
        count_overflow_raise();
        return COUNT_LIMIT;
    }
    return r;
}

static inline unsigned long long count_mul3(unsigned long long a, unsigned long long b, unsigned long long c) {
    return count_mul(count_mul(a, b), c);
}

static inline unsigned long long count_mul4(unsigned long long a, unsigned long long b, unsigned long long c,
                                            unsigned long long d) {
    return count_mul(count_mul3(a, b, c), d);
}

/* io_add and io_total, checked. */
static inline IoBytes count_io_add(IoBytes a, IoBytes b) {
    return io_bytes(count_add(a.read, b.read), count_add(a.write, b.write));
}
static inline unsigned long long count_io_total(IoBytes b) { return count_add(b.read, b.write); }

#ifdef __cplusplus
}
#endif
#endif
