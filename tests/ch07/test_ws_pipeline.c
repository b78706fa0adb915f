/* Step 10's pipeline (10_warp_specialized.cu) on the CPU: a model of its warps, its mbarriers, its named barriers
 * and the copy engine, run by the kernel's own rules (tiles.h: the stages, the parities the warps wait on, the
 * arrivals each phase counts, the named barriers' threads) under thousands of random interleavings, for blocks of 1
 * to 9 visits. A pipeline that hangs or overwrites a stage in use on the GPU does so here first, without one.
 *
 * The model does what the hardware does with those instructions:
 *   - an mbarrier completes a phase when its pending arrivals and its announced bytes are both down to 0, then
 *     starts the next with its count; a wait with parity P passes once the phase of parity P has completed, that is
 *     while the current phase's parity is not P (so a wait for parity 1 passes before any phase has completed);
 *   - a named barrier completes a generation when its threads have arrived (bar.arrive, bar.sync or barrier.sync, a
 *     warp counting 32); bar.sync and barrier.sync also wait for that; a warp arriving twice in one generation would
 *     be counted twice by the hardware, a protocol error here;
 *   - the copy engine (the tiles' boxes, each lane's 4-byte cp.async and the arrival it makes on landing, the bulk
 *     reductions' reads of dQ_s) finishes each copy at a random later time.
 * And it checks: every warp reaches its end (no deadlock), every copy lands; the copying warp starts visit v's copies
 * into a stage only once every consumer warp has released the stage's visit v - 2; a consumer reads a stage only
 * when all of its visit's copies have landed there; a buffer of dS_s is written only while no dQ product reads it,
 * and read by dQ_i's product only once every consumer warp has written visit i's; dQ_s is written only after the copy
 * engine has read the visit before's, and read only once every consumer warp has stored the visit's. A second test
 * breaks one rule at a time and sees the model fail: the first test can fail. */
#include "ch07_test.h"

#define COPY_WARP 0 /* the producer's warp 0: the copies */
#define DQ_WARP 1   /* the producer's warp 1: dQ's reductions */
#define CONSUMER_WARPS (TC_WG_THREADS / 32)
#define WARPS (2 + CONSUMER_WARPS) /* consumer warp c is warp 2 + c */
#define LANES 32
#define BOX 1000       /* the bytes of one box of a tile (any positive number does) */
#define MAX_EVENTS 256 /* copies in flight at once: at most two stages of 2 + 32, and K_j, V_j's 2 */

/* The rules under test: the kernel's (tiles.h), or one broken on purpose. */
typedef struct {
    int (*stage)(int v);
    unsigned (*full_parity)(int v);
    unsigned (*empty_parity)(int v);
    int full_arrivals, empty_arrivals;
    int ds_threads, dq_threads;
    int dq_free_first; /* the dQ warp meets DQ_FREE in the first visit too, as in every other */
} Rules;

typedef struct {
    int count, pending, tx, completed; /* completed: the phases completed so far */
} MBar;

typedef struct {
    int warps, arrived, gen;
    int arrived_gen[WARPS]; /* the generation each warp last arrived in */
} NBar;

typedef enum { COPY_BOX, COPY_LANE, READ_DQ } EventKind;
typedef struct {
    EventKind kind;
    MBar *bar;
    int stage, visit; /* stage -1: K_j and V_j */
} Event;

typedef struct {
    Rules r;
    int V; /* the block's visits */
    MBar kv_full, full[TC_WS_STAGES], empty[TC_WS_STAGES];
    NBar ds_ready, dq_ready, dq_free;
    int kv_landed;                                          /* boxes of K_j, V_j landed (2 to come) */
    int stage_visit[TC_WS_STAGES], stage_landed[TC_WS_STAGES]; /* the visit a stage holds; its copies landed */
    int released[CONSUMER_WARPS];                           /* the last visit each consumer warp released */
    int ds_visit[TC_WS_STAGES][CONSUMER_WARPS];             /* the visit whose dS^T a warp wrote in a buffer */
    int dq_reads[CONSUMER_WARPS];                           /* the dS buffer a warp's running dQ product reads */
    int dq_written[CONSUMER_WARPS];                         /* the visit whose dQ_i a warp stored in dQ_s */
    int engine_reads_dq;                                    /* the bulk reductions are reading dQ_s */
    int pc[WARPS], v[WARPS], done[WARPS], sync_gen[WARPS];
    Event ev[MAX_EVENTS];
    int nev;
    char err[256];
} Model;

/* The stage's copies of one visit: the two boxes (Q_i, dO_i) and one 4-byte copy pair (L, D) per lane. */
#define STAGE_COPIES (2 + LANES)

#define FAIL(m, ...) (snprintf((m)->err, sizeof((m)->err), __VA_ARGS__), 0)

static void mbar_init_m(MBar *b, int count) { *b = (MBar){.count = count, .pending = count}; }
static void mbar_complete(MBar *b) {
    if (b->pending == 0 && b->tx == 0) {
        b->completed++;
        b->pending = b->count;
    }
}
static int mbar_arrive_m(Model *m, MBar *b) {
    if (b->pending == 0) return FAIL(m, "an mbarrier arrival beyond its count");
    b->pending--;
    mbar_complete(b);
    return 1;
}
static int mbar_expect_m(Model *m, MBar *b, int bytes) {
    b->tx += bytes;
    return mbar_arrive_m(m, b);
}
static int mbar_passed(const MBar *b, unsigned parity) { return (unsigned)(b->completed % 2) != parity; }

static void nbar_init_m(NBar *b, int threads) {
    *b = (NBar){.warps = threads / 32};
    for (int w = 0; w < WARPS; w++) b->arrived_gen[w] = -1;
}
/* Warp w arrives; its generation is kept for a wait (sync_gen). */
static int nbar_arrive_m(Model *m, NBar *b, int w) {
    if (b->arrived_gen[w] == b->gen) return FAIL(m, "warp %d arrives twice in one generation of a named barrier", w);
    b->arrived_gen[w] = b->gen;
    m->sync_gen[w] = b->gen;
    if (++b->arrived == b->warps) b->gen++, b->arrived = 0;
    return 1;
}

static int add_event(Model *m, EventKind kind, MBar *bar, int stage, int visit) {
    if (m->nev == MAX_EVENTS) return FAIL(m, "more than %d copies in flight", MAX_EVENTS);
    m->ev[m->nev++] = (Event){kind, bar, stage, visit};
    return 1;
}

/* The copy engine finishes copy e. */
static int land(Model *m, int e) {
    const Event x = m->ev[e];
    m->ev[e] = m->ev[--m->nev];
    if (x.kind == READ_DQ) {
        m->engine_reads_dq = 0;
        return 1;
    }
    if (x.stage < 0) {
        m->kv_landed++;
    } else {
        if (m->stage_visit[x.stage] != x.visit)
            return FAIL(m, "a copy of visit %d lands in stage %d, which holds visit %d", x.visit, x.stage,
                        m->stage_visit[x.stage]);
        m->stage_landed[x.stage]++;
    }
    if (x.kind == COPY_BOX) {
        x.bar->tx -= BOX;
        mbar_complete(x.bar);
        return 1;
    }
    return mbar_arrive_m(m, x.bar); /* the lane's cp.async.mbarrier.arrive.noinc */
}

/* A consumer warp reads visit v's tiles from its stage. */
static int read_stage(Model *m, int c, int v) {
    const int s = m->r.stage(v);
    if (m->stage_visit[s] != v || m->stage_landed[s] != STAGE_COPIES)
        return FAIL(m, "consumer warp %d reads visit %d in stage %d: it holds visit %d, %d of %d copies landed", c, v,
                    s, m->stage_visit[s], m->stage_landed[s], STAGE_COPIES);
    return 1;
}

/* One step of warp w (0 where it waits); dry: only whether it can take one. The programs follow the kernel's. */
static int step(Model *m, int w, int dry) {
    const int V = m->V;
    int *pc = &m->pc[w], *v = &m->v[w];
    if (w == COPY_WARP) {
        if (*pc == 0) { /* K_j, V_j */
            if (dry) return 1;
            *pc = 1;
            return mbar_expect_m(m, &m->kv_full, 2 * BOX) && add_event(m, COPY_BOX, &m->kv_full, -1, -1) &&
                   add_event(m, COPY_BOX, &m->kv_full, -1, -1);
        }
        const int s = m->r.stage(*v);
        if (*v >= TC_WS_STAGES && !mbar_passed(&m->empty[s], m->r.empty_parity(*v))) return 0;
        if (dry) return 1;
        for (int c = 0; c < CONSUMER_WARPS; c++)
            if (m->released[c] < *v - TC_WS_STAGES)
                return FAIL(m, "visit %d's copies into stage %d while consumer warp %d has released visit %d only", *v,
                            s, c, m->released[c]);
        m->stage_visit[s] = *v;
        m->stage_landed[s] = 0;
        if (!mbar_expect_m(m, &m->full[s], 2 * BOX) || !add_event(m, COPY_BOX, &m->full[s], s, *v) ||
            !add_event(m, COPY_BOX, &m->full[s], s, *v))
            return 0;
        for (int l = 0; l < LANES; l++)
            if (!add_event(m, COPY_LANE, &m->full[s], s, *v)) return 0;
        if (++*v == V) m->done[w] = 1;
        return 1;
    }
    if (w == DQ_WARP) {
        switch (*pc) {
        case 0: /* barrier.sync DQ_FREE at the visit's start: the arrival (none in the first visit, broken) */
            if (dry) return 1;
            if (*v == 0 && !m->r.dq_free_first) {
                *pc = 2;
                return 1;
            }
            *pc = 1;
            return nbar_arrive_m(m, &m->dq_free, w);
        case 1: /* ... and the wait */
            if (m->dq_free.gen <= m->sync_gen[w]) return 0;
            if (dry) return 1;
            *pc = 2;
            return 1;
        case 2: /* bar.sync DQ_READY: the arrival */
            if (dry) return 1;
            *pc = 3;
            return nbar_arrive_m(m, &m->dq_ready, w);
        case 3: /* ... and the wait; then the reductions, read by the copy engine */
            if (m->dq_ready.gen <= m->sync_gen[w]) return 0;
            if (dry) return 1;
            for (int c = 0; c < CONSUMER_WARPS; c++)
                if (m->dq_written[c] != *v)
                    return FAIL(m, "dQ_s of visit %d read while consumer warp %d's holds visit %d", *v, c,
                                m->dq_written[c]);
            m->engine_reads_dq = 1;
            *pc = 4;
            return add_event(m, READ_DQ, NULL, -1, *v);
        default: /* bulk_wait_read: the copy engine has read dQ_s; on to the next visit */
            if (m->engine_reads_dq) return 0;
            if (dry) return 1;
            *pc = 0;
            if (++*v == V) m->done[w] = 1;
            return 1;
        }
    }
    const int c = w - 2, buf = m->r.stage(*v);
    switch (*pc) {
    case 0: /* K_j, V_j */
        if (!mbar_passed(&m->kv_full, 0)) return 0;
        if (dry) return 1;
        *pc = 1;
        return m->kv_landed == 2 ? 1 : FAIL(m, "consumer warp %d past kv_full with %d of 2 boxes", c, m->kv_landed);
    case 1: /* the first visit's stage, for the first S^T */
        if (!mbar_passed(&m->full[m->r.stage(0)], m->r.full_parity(0))) return 0;
        if (dry) return 1;
        *pc = 2;
        return read_stage(m, c, 0);
    case 2: /* the visit's products (reading the stage), dS^T into dS_s, each lane's release, bar.sync DS_READY */
        if (dry) return 1;
        for (int x = 0; x < CONSUMER_WARPS; x++)
            if (m->dq_reads[x] == buf)
                return FAIL(m, "consumer warp %d writes dS buffer %d (visit %d) while warp %d's dQ product reads it",
                            c, buf, *v, x);
        m->ds_visit[buf][c] = *v;
        m->released[c] = *v;
        *pc = 3;
        if (!read_stage(m, c, *v)) return 0;
        for (int lane = 0; lane < LANES; lane++) /* each lane's arrival: each read the stage */
            if (!mbar_arrive_m(m, &m->empty[buf])) return 0;
        return nbar_arrive_m(m, &m->ds_ready, w);
    case 3: /* past DS_READY: dQ_i's product issued, reading every warp's dS^T of the visit */
        if (m->ds_ready.gen <= m->sync_gen[w]) return 0;
        if (dry) return 1;
        for (int x = 0; x < CONSUMER_WARPS; x++)
            if (m->ds_visit[buf][x] != *v)
                return FAIL(m, "dQ product of visit %d reads warp %d's dS^T of visit %d", *v, x, m->ds_visit[buf][x]);
        m->dq_reads[c] = buf;
        *pc = 4;
        return 1;
    case 4: /* the next visit's stage, for its S^T */
        if (*v + 1 < V && !mbar_passed(&m->full[m->r.stage(*v + 1)], m->r.full_parity(*v + 1))) return 0;
        if (dry) return 1;
        *pc = 5;
        return *v + 1 == V || read_stage(m, c, *v + 1);
    case 5: /* dQ_i's product waited on; barrier.sync DQ_FREE */
        if (dry) return 1;
        m->dq_reads[c] = -1;
        *pc = 6;
        return nbar_arrive_m(m, &m->dq_free, w);
    default: /* past DQ_FREE: dQ_i into dQ_s, bar.arrive DQ_READY */
        if (m->dq_free.gen <= m->sync_gen[w]) return 0;
        if (dry) return 1;
        if (m->engine_reads_dq) return FAIL(m, "consumer warp %d stores visit %d's dQ_i while dQ_s is read", c, *v);
        m->dq_written[c] = *v;
        *pc = 2;
        if (++*v == V) m->done[w] = 1;
        return nbar_arrive_m(m, &m->dq_ready, w);
    }
}

/* One block of V visits under the interleaving seed picks; the first error, or "" where none. */
static const char *run_model(Model *m, const Rules *r, int V, unsigned seed) {
    memset(m, 0, sizeof(*m));
    m->r = *r;
    m->V = V;
    mbar_init_m(&m->kv_full, 1);
    for (int s = 0; s < TC_WS_STAGES; s++) {
        mbar_init_m(&m->full[s], r->full_arrivals);
        mbar_init_m(&m->empty[s], r->empty_arrivals);
        m->stage_visit[s] = -1;
        for (int c = 0; c < CONSUMER_WARPS; c++) m->ds_visit[s][c] = -1;
    }
    nbar_init_m(&m->ds_ready, r->ds_threads);
    nbar_init_m(&m->dq_ready, r->dq_threads);
    nbar_init_m(&m->dq_free, r->dq_threads);
    for (int c = 0; c < CONSUMER_WARPS; c++) m->released[c] = m->dq_written[c] = m->dq_reads[c] = -1;
    unsigned x = seed * 2654435761u + 1;
    for (;;) {
        int choice[WARPS + MAX_EVENTS], n = 0;
        for (int w = 0; w < WARPS; w++)
            if (!m->done[w] && step(m, w, 1)) choice[n++] = w;
        for (int e = 0; e < m->nev; e++) choice[n++] = WARPS + e;
        if (n == 0) break;
        x ^= x << 13, x ^= x >> 17, x ^= x << 5; /* xorshift32 */
        const int pick = choice[x % (unsigned)n];
        if (!(pick < WARPS ? step(m, pick, 0) : land(m, pick - WARPS))) return m->err;
    }
    for (int w = 0; w < WARPS; w++)
        if (!m->done[w]) {
            snprintf(m->err, sizeof(m->err), "deadlock: warp %d waits at step %d of visit %d of %d", w, m->pc[w],
                     m->v[w], V);
            return m->err;
        }
    return "";
}

static const Rules KERNEL_RULES = {tc_ws_stage,          tc_ws_full_parity, tc_ws_empty_parity, TC_WS_FULL_ARRIVALS,
                                   TC_WS_EMPTY_ARRIVALS, TC_WG_THREADS,     TC_WS_DQ_THREADS,   1};

/* Every block of 1 to 9 visits, 400 interleavings each. */
Test(ws_pipeline, the_kernels_rules_never_hang_nor_overwrite) {
    static Model m;
    cr_assert_eq(TC_WS_EMPTY_ARRIVALS, CONSUMER_WARPS * LANES);
    cr_assert(TC_WS_DS_READY > 0 && TC_WS_DQ_READY > 0 && TC_WS_DQ_FREE > 0 && TC_WS_DS_READY != TC_WS_DQ_READY &&
                  TC_WS_DS_READY != TC_WS_DQ_FREE && TC_WS_DQ_READY != TC_WS_DQ_FREE,
              "three named barriers of their own, none __syncthreads's 0");
    for (int V = 1; V <= 9; V++)
        for (unsigned seed = 0; seed < 400; seed++) {
            const char *err = run_model(&m, &KERNEL_RULES, V, seed);
            cr_assert_str_empty(err, "%d visits, interleaving %u: %s", V, seed, err);
        }
}

static unsigned wrong_empty_parity(int v) { return (unsigned)(v / TC_WS_STAGES % 2); }   /* the phase of v itself */
static unsigned wrong_full_parity(int v) { return (unsigned)((v / TC_WS_STAGES + 1) % 2); } /* one phase off */

/* Each rule broken alone makes the model fail at some interleaving of a 5-visit block. */
Test(ws_pipeline, a_broken_rule_fails) {
    static Model m;
    Rules broken[6];
    for (int k = 0; k < 6; k++) broken[k] = KERNEL_RULES;
    broken[0].empty_parity = wrong_empty_parity;
    broken[1].full_parity = wrong_full_parity;
    broken[2].full_arrivals = 1;                  /* the lanes' cp.async arrivals not counted */
    broken[3].empty_arrivals = CONSUMER_WARPS * LANES / 2; /* one consumer's lanes only */
    broken[4].dq_free_first = 0;                  /* the dQ warp not at DQ_FREE in the first visit */
    broken[5].ds_threads = 128;                   /* DS_READY for one consumer's threads */
    const char *what[6] = {"empty parity", "full parity", "full arrivals", "empty arrivals", "dQ_s's first hand-over",
                           "DS_READY's threads"};
    for (int k = 0; k < 6; k++) {
        int failed = 0;
        for (unsigned seed = 0; seed < 400 && !failed; seed++) failed = run_model(&m, &broken[k], 5, seed)[0] != 0;
        cr_assert(failed, "the model passes with a broken rule: %s", what[k]);
    }
}
