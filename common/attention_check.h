/* attention_check.h: the sampled float64 check of O and L (every chapter's program and every test use it). */
#ifndef FA_ATTENTION_CHECK_H
#define FA_ATTENTION_CHECK_H

#include "attention_table.h"
#include "options.h"
#include "reference.h"

#ifdef __cplusplus
extern "C" {
#endif

/* float64 O and L of some rows of some heads. Heads: all up to ATTN_CHECK_HEADS, else the first, the last
 * and evenly spaced between. Rows: all up to ATTN_FULL_CHECK_N tokens; above (a whole head costs seconds to
 * minutes of float64) ATTN_CHECK_ROWS of them: the first 8 (the first query block, which sees fewest keys
 * under the causal mask), the last 24 (the ragged last blocks) and 32 spread between. */
#define ATTN_CHECK_HEADS 4
#define ATTN_FULL_CHECK_N 1024
#define ATTN_CHECK_ROWS 64

/* The checked rows of a head of N tokens, as above, into rows (room for max(N, ATTN_CHECK_ROWS)); returns how many. */
int attn_rows_to_check(int N, int *rows);

struct AttnExpected {
    int N, d;
    int nheads, heads[ATTN_CHECK_HEADS]; /* checked heads (b*H + h)                      */
    int nrows, *rows;                    /* checked rows of each: all N, or the sample    */
    double *O, *L;                       /* expected: [nheads][nrows][d], [nheads][nrows] */
};

/* The tolerances of c for a run (its tolerances hook, else attn_tolerance for both). */
void attn_chapter_tolerances(const AttnChapter *c, const Options *o, const AttnHost *t, const AttnExpected *e,
                             double *tol_O, double *tol_L);

AttnExpected attn_expected(const Options *o, const float *Q, const float *K, const float *V);
void attn_expected_free(AttnExpected *e);
/* O and L (every head) against e. A non-finite value anywhere in O or L (an element left unwritten is still
 * NaN from the poison) fails its check, sampled or not. */
void attn_compare(const AttnExpected *e, const Options *o, const float *O, const float *L, ErrorStats *err_O,
                  ErrorStats *err_L);
/* The report has one check per row: the worse of O's and L's relative errors (max error: the larger). */
ErrorStats worse_of(ErrorStats a, ErrorStats b);
/* Relative L2 error allowed for O and for L in fp32: sums over up to N keys, so it grows slowly with N. */
double attn_tolerance(const Options *o);

#ifdef __cplusplus
}
#endif
#endif
