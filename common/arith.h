/* arith.h: integer helpers shared by host and device code. */
#ifndef FA_ARITH_H
#define FA_ARITH_H

#ifdef __cplusplus
extern "C" {
#endif

/* ceil(a / b) for a >= 0, b > 0: the number of tiles of size b that cover a. */
static inline long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

#ifdef __cplusplus
}
#endif
#endif
