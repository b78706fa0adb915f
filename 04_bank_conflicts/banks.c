/* banks.c: the bank model of banks.h. Every load is generated lane by lane with the kernels' own index
 * functions (layouts.h: variants.cu's, and the paired layout's, which tests hold equal to kernels.cu's) and tile
 * strides (tiles.h), then costed with the wavefront rule below; nothing is assumed per layout, so a change to the
 * kernels' indexing changes the prediction with it. */
#include "banks.h"

#include <errno.h>
#include <string.h>

#include "attention.h"
#include "checked_math.h"
#include "model.h"
#include "layouts.h"
#include "report.h"
#include "tiles.h"

typedef unsigned long long u64;

enum { WARP_LANES = 32, BANK_COUNT = 32 };

typedef enum { LOAD_Q, LOAD_K, LOAD_P, LOAD_V } LoadKind;

static const char *const NAMES[LAYOUT_COUNT] = {"naive", "transposed", "padded", "swizzled", "paired"};

const char *banks_layout_name(int layout) { return layout >= 0 && layout < LAYOUT_COUNT ? NAMES[layout] : NULL; }

/* ---- the wavefront rule ---------------------------------------------------------------------------------
 * A warp's shared load of W bytes per lane is served in phases, each a group of lanes whose words the 32
 * banks (4-byte words, bank = word offset mod 32) deliver together:
 *   W = 16: 2 half-warp phases (lanes 0-15, 16-31) when every lane n reads the same address as lane n^1, or
 *           every lane n the same as lane n^2 (the load is "paired"); else 4 quarter-warp phases (0-7, ...)
 *   W = 8:  1 phase when every lane n reads the same address as lane n^1; else 2 half-warp phases
 *   W = 4:  1 phase
 * A phase costs as many wavefronts as the most DISTINCT words one bank must deliver in it (at least 1): lanes
 * reading the same word share it (broadcast), different words in one bank are served one after another.
 * Ideal = the number of phases; conflicts = wavefronts - ideal, which is what ncu reports as bank conflicts.
 * Why phases at all: a bank delivers 4 bytes per cycle, 128 bytes for the 32 banks, so a float4 load of 32
 * lanes (512 bytes) needs 4 cycles however it is laid out; the hardware splits it by lanes, and a pair of
 * lanes asking for one address halves the bytes to move. Checked against ncu on an H200 (chapter 03's
 * kernel, d = 64, Bc = 32): 2,498.1 wavefronts per warp per K/V block measured, 2,496 from this rule. */

static int same_address_as(const long long off[WARP_LANES], int x) {
    for (int n = 0; n < WARP_LANES; n++)
        if (off[n] != off[n ^ x]) return 0;
    return 1;
}

static int load_phases(const long long off[WARP_LANES], int bytes) {
    if (bytes == 16) return same_address_as(off, 1) || same_address_as(off, 2) ? 2 : 4;
    if (bytes == 8) return same_address_as(off, 1) ? 1 : 2;
    return 1;
}

static int load_valid(const long long off[WARP_LANES], int bytes) {
    if (bytes != 4 && bytes != 8 && bytes != 16) return 0;
    for (int n = 0; n < WARP_LANES; n++)
        if (off[n] < 0 || off[n] % (bytes / 4) != 0) return 0; /* a vector load must be aligned to its size */
    return 1;
}

/* The wavefronts of one valid load, and (wave != NULL) the wavefront, 1-based within the load, in which lane
 * n's w-th word is delivered: a phase's wavefronts follow the previous phases', and within a phase the
 * distinct words of one bank go out in the order their first lanes ask for them. */
static int load_wavefronts(const long long off[WARP_LANES], int bytes, int *phases_out, int wave[WARP_LANES][4]) {
    const int phases = load_phases(off, bytes), lanes = WARP_LANES / phases, words = bytes / 4;
    int total = 0;
    for (int p = 0; p < phases; p++) {
        /* A lane's words are consecutive (at most 4 < 32), so each lane brings at most one word per bank and a
         * bank sees at most `lanes` distinct words in a phase. */
        /* ASSIGNMENT BEGIN wavefronts [banks]: what `make assignment CH=04` replaces with the stub below */
        /* ASSIGNMENT STUB wavefronts
        // TODO: the wavefronts of phase p: for each bank, the distinct words its lanes ask for (a word asked
        // twice is a broadcast); the phase costs the most any bank must deliver (at least 1). Set wave[n][w]
        // when wave != NULL, and add the phase's cost to total. README: "The bank rule, and the model".
        for (int n = p * lanes; n < (p + 1) * lanes; n++)
            for (int w = 0; w < words; w++)
                if (wave) wave[n][w] = total + 1;
        total += 1;
        */
        long long seen[BANK_COUNT][WARP_LANES];
        int nseen[BANK_COUNT] = {0}, worst = 1;
        for (int n = p * lanes; n < (p + 1) * lanes; n++)
            for (int w = 0; w < words; w++) {
                const long long a = off[n] + w;
                const int b = (int)(a % BANK_COUNT);
                int i = 0;
                while (i < nseen[b] && seen[b][i] != a) i++;
                if (i == nseen[b]) seen[b][nseen[b]++] = a;
                if (wave) wave[n][w] = total + i + 1;
                if (nseen[b] > worst) worst = nseen[b];
            }
        total += worst;
        /* ASSIGNMENT END wavefronts */
    }
    if (phases_out) *phases_out = phases;
    return total;
}

BankCounts bank_counts_load(const long long offset[32], int bytes) {
    BankCounts c = {0, 0, 0};
    if (!load_valid(offset, bytes)) return c;
    int phases;
    c.requests = 1;
    c.wavefronts = (u64)load_wavefronts(offset, bytes, &phases, NULL);
    c.conflicts = c.wavefronts - (u64)phases;
    return c;
}

/* ---- the loads of flash_v4_kernel, one warp, one K/V block ---------------------------------------------- */

static int shape_supported(int layout, int d, int Br, int Bc) {
    return layout >= 0 && layout < LAYOUT_COUNT && head_dim_supported(d) && br_supported(Br) && bc_supported(Bc);
}

typedef void (*LoadVisit)(void *ctx, LoadKind kind, const long long off[WARP_LANES], int bytes);

/* Calls visit for every shared load that warp `warp` of a block executes in one K/V block, in the kernel's order,
 * with the float offsets from the start of dynamic shared memory that the kernel computes (its loops in
 * kernels.cu and variants.cu, S_ij then P_ij V_j; the tiles Q_s, K_s, V_s, P_s in the kernel's order and sizes). */
static void warp_loads(int layout, int d, int Br, int Bc, int warp, LoadVisit visit, void *ctx) {
    const int QS = d + Q_PAD, PS = Bc + P_PAD, TN = Bc / ROW_LANES, TD = d / (4 * ROW_LANES);
    const long long Q_s = 0, K_s = Q_s + (long long)Br * QS, V_s = K_s + k_tile_floats(layout, Bc, d),
                    P_s = V_s + (long long)Bc * d;
    int r0[WARP_LANES], g[WARP_LANES];
    for (int n = 0; n < WARP_LANES; n++) {
        r0[n] = warp * ROWS_PER_WARP + row_lane(layout, n);
        g[n] = key_lane(layout, n);
    }
    long long off[WARP_LANES];

    for (int k = 0; k < d; k += 4) { /* S_ij = Q_i K_j^T */
        for (int t = 0; t < TM; t++) {
            for (int n = 0; n < WARP_LANES; n++) off[n] = Q_s + (long long)(r0[n] + 4 * t) * QS + k;
            visit(ctx, LOAD_Q, off, 16);
        }
        if (layout == LAYOUT_TRANSPOSED) {
            const int VW = transposed_vw(Bc);
            for (int cq = 0; cq < TN / VW; cq++)
                for (int e = 0; e < 4; e++) {
                    for (int n = 0; n < WARP_LANES; n++) off[n] = K_s + (k + e) * Bc + VW * g[n] + 8 * VW * cq;
                    visit(ctx, LOAD_K, off, 4 * VW);
                }
        } else {
            for (int c = 0; c < TN; c++) {
                for (int n = 0; n < WARP_LANES; n++) off[n] = K_s + k_offset(layout, Bc, d, g[n] + ROW_LANES * c, k);
                visit(ctx, LOAD_K, off, 16);
            }
        }
    }
    for (int c = 0; c < Bc; c += 4) { /* O_i += P_ij V_j */
        for (int t = 0; t < TM; t++) {
            for (int n = 0; n < WARP_LANES; n++) off[n] = P_s + (long long)(r0[n] + 4 * t) * PS + c;
            visit(ctx, LOAD_P, off, 16);
        }
        for (int e = 0; e < 4; e++)
            for (int u = 0; u < TD; u++) {
                for (int n = 0; n < WARP_LANES; n++) off[n] = V_s + (long long)(c + e) * d + 4 * (g[n] + ROW_LANES * u);
                visit(ctx, LOAD_V, off, 16);
            }
    }
}

static void add_load(void *ctx, LoadKind kind, const long long off[WARP_LANES], int bytes) {
    BankCounts *sum = ctx;
    const BankCounts c = bank_counts_load(off, bytes);
    /* A misaligned offset would be a bug in the generator above, not a property of the kernel: it shows as a
     * load that counts no request, which the tests' request totals catch. */
    sum->requests += c.requests;
    sum->wavefronts += c.wavefronts;
    sum->conflicts += c.conflicts;
}

static BankCounts warp_counts(int layout, int d, int Br, int Bc, int warp) {
    BankCounts sum = {0, 0, 0};
    warp_loads(layout, d, Br, Bc, warp, add_load, &sum);
    return sum;
}

BankCounts bank_counts_warp_block(int layout, int d, int Br, int Bc) {
    const BankCounts none = {0, 0, 0};
    return shape_supported(layout, d, Br, Bc) ? warp_counts(layout, d, Br, Bc, 0) : none;
}

BankCounts bank_counts(const Options *o, int layout) {
    BankCounts total = {0, 0, 0};
    if (!shape_supported(layout, o->d, o->Br, o->Bc)) return total;
    /* Each warp of a block is costed on its own rows rather than assumed equal to warp 0 (they are: a warp's
     * rows move its offsets by multiples of 32 floats), so a kernel change that broke that would show. */
    BankCounts block = {0, 0, 0};
    for (int w = 0; w < o->Br / ROWS_PER_WARP; w++) {
        const BankCounts c = warp_counts(layout, o->d, o->Br, o->Bc, w);
        block.requests += c.requests;
        block.wavefronts += c.wavefronts;
        block.conflicts += c.conflicts;
    }
    /* Every visited K/V block runs both loops whole (a ragged or masked block included), so the block's
     * counts repeat for each visit. */
    u64 visits = 0;
    const long long Tr = ceil_div(o->N, o->Br);
    for (long long i = 0; i < Tr; i++) visits = count_add(visits, (u64)attn_kv_blocks(o->N, o->Br, o->Bc, o->causal, i));
    const u64 reps = count_mul3(visits, (u64)o->B, (u64)o->H);
    total.requests = count_mul(block.requests, reps);
    total.wavefronts = count_mul(block.wavefronts, reps);
    total.conflicts = count_mul(block.conflicts, reps);
    return total;
}

void banks_print(FILE *f, const Options *o) {
    char a[32], b[32], c[32], e[32], g[32];
    fprintf(f, "shared-memory loads of flash_v4 per layout of K_j (its S_ij and P_ij V_j loops; d=%d Br=%d Bc=%d%s):\n",
            o->d, o->Br, o->Bc, o->causal ? " causal" : "");
    if (!shape_supported(0, o->d, o->Br, o->Bc)) {
        fprintf(f, "  none: the kernel does not compile these tiles\n");
        return;
    }
    fprintf(f, "  %-11s %18s %18s %18s %8s %7s %18s\n", "layout", "requests", "wavefronts", "conflicts", "rate",
            "N-way", "per warp-block");
    for (int L = 0; L < LAYOUT_COUNT; L++) {
        const BankCounts t = bank_counts(o, L), w = bank_counts_warp_block(L, o->d, o->Br, o->Bc);
        const double rate = t.wavefronts ? 100.0 * (double)t.conflicts / (double)t.wavefronts : 0.0;
        const double way = t.requests ? (double)t.wavefronts / (double)t.requests : 0.0;
        char per[48];
        snprintf(per, sizeof(per), "%s / %s", fmt_bytes(w.wavefronts, e, 32), fmt_bytes(w.conflicts, g, 32));
        const int chosen = o->chapter[CH04_OPT_LAYOUT].given && layout_of(o) == L;
        fprintf(f, "  %-11s %18s %18s %18s %7.1f%% %7.2f %18s%s\n", NAMES[L], fmt_bytes(t.requests, a, 32),
                fmt_bytes(t.wavefronts, b, 32), fmt_bytes(t.conflicts, c, 32), rate, way, per,
                chosen ? "  <- --layout" : "");
    }
    fprintf(f, "  rate = conflicts / wavefronts; N-way = wavefronts / requests; per warp-block = wavefronts / conflicts "
               "of one warp in one K/V block (what ncu's sums divide to)\n");
    fprintf(f, "  bank rule: a 16-byte load takes 2 half-warp phases when every lane n reads the address of lane n^1 "
               "(or of n^2), else 4 quarter-warp phases; 8-byte: 1 phase when n and n^1 match, else 2; 4-byte: 1; a "
               "phase takes as many wavefronts as the most distinct words one bank delivers; conflicts = wavefronts "
               "- phases\n");
}

/* ---- the pictures --------------------------------------------------------------------------------------- */

typedef struct {
    int found;
    long long off[WARP_LANES];
    int bytes;
} FirstK;

static void keep_first_k(void *ctx, LoadKind kind, const long long off[WARP_LANES], int bytes) {
    FirstK *k = ctx;
    if (kind != LOAD_K || k->found) return;
    memcpy(k->off, off, sizeof(k->off));
    k->bytes = bytes;
    k->found = 1;
}

int bank_picture(FILE *f, int layout, int d, int Bc) {
    /* K_s starts Br (d + 4) floats in, a multiple of 32 for every Br the kernel compiles: any Br gives the same
     * banks, so the picture takes the smallest. */
    const int Br = ROWS_PER_WARP;
    if (!shape_supported(layout, d, Br, Bc)) return -1;
    FirstK k = {0};
    warp_loads(layout, d, Br, Bc, 0, keep_first_k, &k);
    if (!k.found || !load_valid(k.off, k.bytes)) return -1;
    int wave[WARP_LANES][4], phases;
    const int waves = load_wavefronts(k.off, k.bytes, &phases, wave);

    int cell[WARP_LANES][BANK_COUNT];
    memset(cell, 0, sizeof(cell));
    for (int n = 0; n < WARP_LANES; n++)
        for (int w = 0; w < k.bytes / 4; w++) cell[n][(k.off[n] + w) % BANK_COUNT] = wave[n][w];

    fprintf(f, "# bank picture of flash_v4's first K_j load (S_ij loop, k = 0, first key slot)\n");
    fprintf(f, "# layout %s d %d Bc %d bytes %d wavefronts %d phases %d\n", NAMES[layout], d, Bc, k.bytes, waves,
            phases);
    fprintf(f, "# row = lane 0..31, column = bank 0..31, value = wavefront (1-based) delivering the lane's word "
               "in that bank, 0 = no word there\n");
    for (int n = 0; n < WARP_LANES; n++)
        for (int b = 0; b < BANK_COUNT; b++) fprintf(f, "%d%c", cell[n][b], b + 1 < BANK_COUNT ? ' ' : '\n');
    return ferror(f) ? -1 : waves;
}

int banks_pictures(const char *dir, int d, int Bc) {
    for (int L = 0; L < LAYOUT_COUNT; L++) {
        char path[4096];
        if (snprintf(path, sizeof(path), "%s/ch04_banks_%s.dat", dir, NAMES[L]) >= (int)sizeof(path)) {
            fprintf(stderr, "banks: folder name too long: %s\n", dir);
            return -1;
        }
        FILE *f = fopen(path, "w");
        if (!f) {
            fprintf(stderr, "banks: cannot write %s: %s\n", path, strerror(errno));
            return -1;
        }
        const int waves = bank_picture(f, L, d, Bc);
        if (fclose(f) != 0 || waves < 0) {
            fprintf(stderr, "banks: %s: %s\n", path, waves < 0 ? "no picture at these tiles, or a write failed"
                                                                : strerror(errno));
            return -1;
        }
    }
    return 0;
}
