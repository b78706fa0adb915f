/* Chapter 04's bank model (banks.c): the wavefront rule on hand-made loads, the article's numbers per layout,
 * conflict freedom of the four fixed layouts at every tile the kernel compiles, the whole-problem scaling, the
 * --model lines and the pictures. No GPU needed. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../04_bank_conflicts/banks.h"
#include "../../04_bank_conflicts/layouts.h"
#include "../../04_bank_conflicts/model.h"

typedef unsigned long long u64;

static const int DS[] = {32, 64, 128}, BCS[] = {16, 32, 64}, BRS[] = {16, 32, 64, 128};
#define LEN(a) (int)(sizeof(a) / sizeof((a)[0]))

/* The article's configuration: B=10 H=64 N=1024 d=64 Br=Bc=32, no mask. */
static Options article(void) {
    Options o;
    options_defaults(&o);
    o.B = 10, o.H = 64, o.N = 1024, o.d = 64, o.Br = 32, o.Bc = 32, o.causal = 0;
    return o;
}

/* 2 warps x 32 query blocks x 32 K/V blocks x 640 heads */
static const u64 ARTICLE_WARP_BLOCKS = 1310720ULL;

static void expect(BankCounts c, u64 requests, u64 wavefronts, u64 conflicts, const char *what) {
    cr_expect_eq(c.requests, requests, "%s: requests %llu, expected %llu", what, c.requests, requests);
    cr_expect_eq(c.wavefronts, wavefronts, "%s: wavefronts %llu, expected %llu", what, c.wavefronts, wavefronts);
    cr_expect_eq(c.conflicts, conflicts, "%s: conflicts %llu, expected %llu", what, c.conflicts, conflicts);
}

/* ---- the rule on hand-made loads ------------------------------------------------------------------------ */

Test(banks, a_broadcast_is_one_wavefront_per_phase) {
    long long off[32];
    for (int n = 0; n < 32; n++) off[n] = 100;
    expect(bank_counts_load(off, 4), 1, 1, 0, "4-byte broadcast");
    for (int n = 0; n < 32; n++) off[n] = 96;
    expect(bank_counts_load(off, 8), 1, 1, 0, "8-byte broadcast: n and n^1 agree, one phase");
    expect(bank_counts_load(off, 16), 1, 2, 0, "16-byte broadcast: paired, two half-warp phases");
}

Test(banks, thirty_two_distinct_banks_are_one_wavefront) {
    long long off[32];
    for (int n = 0; n < 32; n++) off[n] = 7 * 32 + (n * 5) % 32; /* a permutation of the banks */
    expect(bank_counts_load(off, 4), 1, 1, 0, "4-byte, 32 banks");
    for (int n = 0; n < 32; n++) off[n] = 2 * n;
    expect(bank_counts_load(off, 8), 1, 2, 0, "8-byte, consecutive: 2 half-warp phases of 32 banks");
    for (int n = 0; n < 32; n++) off[n] = 4 * n;
    expect(bank_counts_load(off, 16), 1, 4, 0, "16-byte, consecutive: 4 quarter-warp phases of 32 banks");
}

Test(banks, an_eight_way_conflict_takes_eight_wavefronts) {
    long long off[32];
    for (int n = 0; n < 32; n++) off[n] = 32 * (n / 4) + n % 4; /* banks 0..3, 8 different words each */
    expect(bank_counts_load(off, 4), 1, 8, 7, "4-byte, 8 words per bank");
    /* The same words read twice (lanes n and n + 16 agree) are broadcast, not a 16-way conflict. */
    for (int n = 0; n < 32; n++) off[n] = 32 * ((n % 16) / 2) + n % 2;
    expect(bank_counts_load(off, 4), 1, 8, 7, "4-byte, 8 words per bank, each read twice");
    /* chapter 03's K_j read: 8 keys d = 64 floats apart per quarter warp, one float4 each */
    for (int n = 0; n < 32; n++) off[n] = 64 * (n % 8);
    expect(bank_counts_load(off, 16), 1, 32, 28, "16-byte, 8 keys 64 floats apart per quarter");
}

Test(banks, phases_follow_the_lanes_that_share_an_address) {
    long long off[32];
    /* n and n^2 agree, n and n^1 do not: 16-byte paired (2 phases), but not 8-byte paired */
    for (int n = 0; n < 32; n++) off[n] = 4 * ((n & 1) | (n >> 2) << 1);
    expect(bank_counts_load(off, 16), 1, 2, 0, "16-byte, n^2 pairs");
    /* 8 lanes of a half warp in one bank with 8 distinct words: a half-warp phase pays 8, two phases 16 */
    for (int n = 0; n < 32; n++) off[n] = 32 * ((n >> 1) % 8) + 2 * (n >> 4);
    expect(bank_counts_load(off, 8), 1, 8, 7, "8-byte, paired by n^1: one phase of 8 words per bank");
    for (int n = 0; n < 32; n++) off[n] = 32 * (n % 8) + 2 * (n / 8);
    expect(bank_counts_load(off, 8), 1, 16, 14, "8-byte, unpaired: 2 half-warp phases of 8 words per bank");
}

Test(banks, a_load_the_hardware_cannot_execute_counts_nothing) {
    long long off[32];
    for (int n = 0; n < 32; n++) off[n] = 4 * n;
    off[5] = 2;
    expect(bank_counts_load(off, 16), 0, 0, 0, "a float4 at an offset of 2 floats");
    off[5] = 20;
    expect(bank_counts_load(off, 12), 0, 0, 0, "12 bytes per lane");
}

/* ---- the kernel's loads --------------------------------------------------------------------------------- */

Test(banks, article_configuration_per_warp_and_k_v_block) {
    const u64 want[LAYOUT_COUNT][2] = {{2496, 1792}, {704, 0}, {704, 0}, {704, 0}, {448, 0}};
    for (int L = 0; L < LAYOUT_COUNT; L++)
        expect(bank_counts_warp_block(L, 64, 32, 32), 224, want[L][0], want[L][1], banks_layout_name(L));
}

Test(banks, article_configuration_whole_problem) {
    const Options o = article();
    const u64 want[LAYOUT_COUNT][2] = {{2496, 1792}, {704, 0}, {704, 0}, {704, 0}, {448, 0}};
    for (int L = 0; L < LAYOUT_COUNT; L++)
        expect(bank_counts(&o, L), 293601280ULL, want[L][0] * ARTICLE_WARP_BLOCKS, want[L][1] * ARTICLE_WARP_BLOCKS,
               banks_layout_name(L));
    /* the numbers the README quotes next to ncu's 2,351,569,093 conflicts of chapter 03 */
    cr_expect_eq(bank_counts(&o, LAYOUT_NAIVE).wavefronts, 3271557120ULL);
    cr_expect_eq(bank_counts(&o, LAYOUT_NAIVE).conflicts, 2348810240ULL);
}

Test(banks, the_fixed_layouts_are_conflict_free_at_every_tile) {
    for (int i = 0; i < LEN(DS); i++)
        for (int j = 0; j < LEN(BCS); j++)
            for (int k = 0; k < LEN(BRS); k++) {
                const int d = DS[i], Bc = BCS[j], Br = BRS[k];
                for (int L = LAYOUT_TRANSPOSED; L < LAYOUT_COUNT; L++) {
                    const BankCounts c = bank_counts_warp_block(L, d, Br, Bc);
                    cr_expect_gt(c.requests, 0, "%s d=%d Br=%d Bc=%d", banks_layout_name(L), d, Br, Bc);
                    cr_expect_eq(c.conflicts, 0, "%s d=%d Br=%d Bc=%d: %llu conflicts", banks_layout_name(L), d, Br,
                                 Bc, c.conflicts);
                }
                /* paired: every float4 load pairs its lanes, so every request is exactly 2 wavefronts */
                const BankCounts p = bank_counts_warp_block(LAYOUT_PAIRED, d, Br, Bc);
                cr_expect_eq(p.wavefronts, 2 * p.requests, "paired d=%d Br=%d Bc=%d", d, Br, Bc);
                cr_expect_gt(bank_counts_warp_block(LAYOUT_NAIVE, d, Br, Bc).conflicts, 0, "naive d=%d Bc=%d", d, Bc);
            }
}

Test(banks, requests_are_the_loop_counts_of_the_kernel) {
    /* S_ij: d/4 steps of TM Q loads + the K loads (Bc/8 float4, or in the transposed layout 4 vector loads of
     * VW keys per VW key slots); P_ij V_j: Bc/4 steps of TM P loads + 4 x d/32 V loads. */
    for (int i = 0; i < LEN(DS); i++)
        for (int j = 0; j < LEN(BCS); j++)
            for (int L = 0; L < LAYOUT_COUNT; L++) {
                const int d = DS[i], Bc = BCS[j], vw = Bc / 8 < 4 ? Bc / 8 : 4;
                const int k_loads = L == LAYOUT_TRANSPOSED ? 4 * (Bc / 8 / vw) : Bc / 8;
                const u64 want = (u64)(d / 4) * (4 + k_loads) + (u64)(Bc / 4) * (4 + 4 * (d / 32));
                cr_expect_eq(bank_counts_warp_block(L, d, 32, Bc).requests, want, "%s d=%d Bc=%d",
                             banks_layout_name(L), d, Bc);
            }
}

Test(banks, counts_do_not_depend_on_br_and_reject_tiles_the_kernel_lacks) {
    for (int L = 0; L < LAYOUT_COUNT; L++)
        for (int k = 1; k < LEN(BRS); k++) {
            const BankCounts a = bank_counts_warp_block(L, 64, 16, 32), b = bank_counts_warp_block(L, 64, BRS[k], 32);
            cr_expect(a.requests == b.requests && a.wavefronts == b.wavefronts && a.conflicts == b.conflicts,
                      "%s Br=%d", banks_layout_name(L), BRS[k]);
        }
    expect(bank_counts_warp_block(LAYOUT_COUNT, 64, 32, 32), 0, 0, 0, "no such layout");
    expect(bank_counts_warp_block(LAYOUT_NAIVE, 48, 32, 32), 0, 0, 0, "d=48");
    expect(bank_counts_warp_block(LAYOUT_NAIVE, 64, 32, 8), 0, 0, 0, "Bc=8");
    expect(bank_counts_warp_block(LAYOUT_NAIVE, 64, 24, 32), 0, 0, 0, "Br=24");
}

Test(banks, whole_problem_scales_with_warps_visited_blocks_and_heads) {
    /* causal, ragged N, Br a multiple of Bc and not: visits counted block by block here */
    const int shapes[][3] = {{1000, 64, 32}, {1000, 32, 64}, {17, 16, 16}, {4097, 128, 64}};
    for (int s = 0; s < LEN(shapes); s++)
        for (int causal = 0; causal <= 1; causal++) {
            Options o = article();
            o.B = 3, o.H = 5, o.N = shapes[s][0], o.Br = shapes[s][1], o.Bc = shapes[s][2], o.causal = causal;
            u64 visits = 0;
            const long long Tr = (o.N + o.Br - 1) / o.Br, Tc = (o.N + o.Bc - 1) / o.Bc;
            for (long long i = 0; i < Tr; i++) {
                const long long last = (i + 1) * o.Br < o.N ? (i + 1) * o.Br - 1 : o.N - 1;
                visits += causal ? (u64)(last / o.Bc + 1) : (u64)Tc;
            }
            const u64 reps = visits * (u64)(o.Br / 16) * 15;
            for (int L = 0; L < LAYOUT_COUNT; L++) {
                const BankCounts w = bank_counts_warp_block(L, o.d, o.Br, o.Bc);
                expect(bank_counts(&o, L), w.requests * reps, w.wavefronts * reps, w.conflicts * reps,
                       banks_layout_name(L));
            }
        }
}

/* ---- what is printed and drawn -------------------------------------------------------------------------- */

Test(banks, model_lines_show_every_layout_and_the_rule) {
    Options o = article();
    char msg[256];
    cr_assert_eq(option_set(&o, ch04_options, "layout", "swizzled", msg, sizeof(msg)), 0, "%s", msg);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert(f);
    banks_print(f, &o);
    fclose(f);
    for (int L = 0; L < LAYOUT_COUNT; L++) cr_expect(strstr(text, banks_layout_name(L)), "%s", banks_layout_name(L));
    cr_expect(strstr(text, "293,601,280"), "%s", text);
    cr_expect(strstr(text, "3,271,557,120"), "%s", text);
    cr_expect(strstr(text, "2,348,810,240"), "%s", text);
    cr_expect(strstr(text, "2,496 / 1,792"), "%s", text);
    cr_expect(strstr(text, "bank rule:"), "%s", text);
    const char *mark = strstr(text, "<- --layout");
    cr_expect(mark && mark > strstr(text, "  swizzled") && strstr(text, "  paired") > mark, "%s", text);
    free(text);
}

/* Reads a picture back: the wavefront of each (lane, bank), and the header's wavefronts. */
static int read_picture(int layout, int d, int Bc, int cell[32][32], int *header_waves) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert(f);
    const int waves = bank_picture(f, layout, d, Bc);
    fclose(f);
    const char *h = strstr(text, "wavefronts ");
    cr_assert(h, "%s", text);
    *header_waves = atoi(h + strlen("wavefronts "));
    FILE *in = fmemopen(text, len, "r");
    char line[512];
    int n = 0;
    while (n < 32 && fgets(line, sizeof(line), in)) {
        if (line[0] == '#') continue;
        char *p = line;
        for (int b = 0; b < 32; b++) cell[n][b] = (int)strtol(p, &p, 10);
        n++;
    }
    fclose(in);
    free(text);
    cr_assert_eq(n, 32, "32 lanes");
    return waves;
}

Test(banks, the_naive_picture_is_a_staircase_in_four_banks) {
    int cell[32][32], header;
    cr_assert_eq(read_picture(LAYOUT_NAIVE, 64, 32, cell, &header), 32);
    cr_expect_eq(header, 32);
    for (int n = 0; n < 32; n++)
        for (int b = 0; b < 32; b++)
            cr_expect_eq(cell[n][b], b < 4 ? n + 1 : 0, "lane %d bank %d", n, b);
}

Test(banks, every_picture_draws_each_lanes_words_once_within_the_loads_wavefronts) {
    for (int i = 0; i < LEN(DS); i++)
        for (int j = 0; j < LEN(BCS); j++)
            for (int L = 0; L < LAYOUT_COUNT; L++) {
                int cell[32][32], header;
                const int waves = read_picture(L, DS[i], BCS[j], cell, &header);
                const int words = L == LAYOUT_TRANSPOSED && BCS[j] == 16 ? 2 : 4; /* float2 at Bc = 16 */
                cr_expect_eq(header, waves);
                int top = 0;
                for (int n = 0; n < 32; n++) {
                    int used = 0;
                    for (int b = 0; b < 32; b++) {
                        used += cell[n][b] > 0;
                        top = cell[n][b] > top ? cell[n][b] : top;
                    }
                    cr_expect_eq(used, words, "%s d=%d Bc=%d lane %d", banks_layout_name(L), DS[i], BCS[j], n);
                }
                cr_expect_eq(top, waves, "%s d=%d Bc=%d", banks_layout_name(L), DS[i], BCS[j]);
                cr_expect_eq(waves, L == LAYOUT_NAIVE ? 32 : L == LAYOUT_PAIRED ? 2 : words == 2 ? 2 : 4,
                             "%s d=%d Bc=%d", banks_layout_name(L), DS[i], BCS[j]);
            }
    cr_expect_eq(bank_picture(stdout, LAYOUT_COUNT, 64, 32), -1);
}

Test(banks, pictures_are_written_for_every_layout) {
    char dir[] = "/tmp/ch04_banks_XXXXXX";
    cr_assert(mkdtemp(dir));
    cr_assert_eq(banks_pictures(dir, 64, 32), 0);
    for (int L = 0; L < LAYOUT_COUNT; L++) {
        char path[128];
        snprintf(path, sizeof(path), "%s/ch04_banks_%s.dat", dir, banks_layout_name(L));
        FILE *f = fopen(path, "r");
        cr_expect(f, "%s", path);
        if (f) fclose(f);
        unlink(path);
    }
    rmdir(dir);
    cr_expect_eq(banks_pictures("/nonexistent-folder-for-ch04", 64, 32), -1);
}
