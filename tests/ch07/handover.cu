/* Step 10's hand-over of dQ_s (10_warp_specialized.cu), alone, under compute-sanitizer: "consumer" warps store a
 * tile into shared memory and hand it over on a named barrier (READY), one "producer" warp reads it and hands it back
 * on another (FREE), for 4 visits.
 *
 *   handover FREE [WARPS [READY [fence] [ds]]]
 *
 * FREE, how the two sides meet FREE at each visit's start:
 *   arrive     the producer arrives (bar.arrive), the consumers wait (bar.sync). Right by PTX's rules (an arrive's
 *              earlier accesses are performed, for the barrier's threads, when the barrier completes), but racecheck
 *              does not follow that order through two barriers, and reports the reads against the next stores.
 *   aligned    both wait (bar.sync), each at its own instruction: bar.sync is barrier.sync.aligned, which PTX allows
 *              only where every thread meets the barrier at the same instruction; synccheck reports it.
 *   unaligned  both wait (barrier.sync): step 10's way.
 * WARPS, the consumer warps, 1 to 8 (default 1; step 10 has 8). READY, how they meet READY: arrive (bar.arrive, the
 * producer waiting with bar.sync: step 10's way, the default) or wait (both barrier.sync). fence: a fence.proxy.async
 * after each consumer's stores, as step 10 has for the copy engine (none by default). ds: the consumers also meet on
 * a barrier of their own each visit (bar.sync, before DQ_FREE), as step 10's do on DS_READY (none by default).
 *
 *   nvcc -arch=sm_90 -Icommon -o handover tests/ch07/handover.cu
 *   compute-sanitizer --tool racecheck ./handover unaligned 8 arrive fence ds
 *   compute-sanitizer --tool synccheck ./handover unaligned 8 arrive fence ds
 *
 * bench.sh's tests stage runs it in several of these ways under both tools (handover.txt); the chapter's README,
 * step 10, reads what they say. */
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "ptx_sm90.cuh" /* named_bar_sync, named_bar_arrive, named_bar_sync_unaligned, fence_proxy_async */

#define DS 1 /* step 10's DS_READY */
#define READY 2
#define FREE 3
#define VISITS 4
#define MAX_WARPS 8

enum Free { ARRIVE, ALIGNED, UNALIGNED };
static const char *const FREES[] = {"arrive", "aligned", "unaligned"};

/* Warp 0 is the producer (step 10's warp 1), warps 1 to `warps` the consumers; both barriers count every thread. */
__global__ void handover(float *out, Free free_way, int warps, int ready_wait, int fence, int ds) {
    __shared__ float tile[32 * MAX_WARPS];
    const int lane = threadIdx.x % 32, threads = 32 * (1 + warps);
    if (threadIdx.x < 32) { /* the producer: step 10's warp 1 */
        for (int v = 0; v < VISITS; v++) {
            /* the tile is free for visit v's stores: the producer has read the visit before's */
            if (free_way == ARRIVE) named_bar_arrive(FREE, threads);
            else if (free_way == ALIGNED) named_bar_sync(FREE, threads);
            else named_bar_sync_unaligned(FREE, threads);
            /* the consumers' stores are in */
            if (ready_wait) named_bar_sync_unaligned(READY, threads);
            else named_bar_sync(READY, threads);
            for (int w = 0; w < warps; w++) out[lane] += tile[32 * w + 31 - lane];
            __syncwarp(); /* the warp's reads are done before the next visit hands the tile back */
        }
    } else { /* the consumers: step 10's consumer warps */
        const int c = threadIdx.x - 32;
        for (int v = 0; v < VISITS; v++) {
            if (ds) named_bar_sync(DS, 32 * warps); /* the consumers among themselves, as on step 10's DS_READY */
            /* the producer has read the visit before's */
            if (free_way == UNALIGNED) named_bar_sync_unaligned(FREE, threads);
            else named_bar_sync(FREE, threads);
            tile[c] = c + v;
            if (fence) fence_proxy_async(); /* the stores, visible to the async proxy (step 10's copy engine) */
            /* the stores are in */
            if (ready_wait) named_bar_sync_unaligned(READY, threads);
            else named_bar_arrive(READY, threads);
        }
    }
}

static int usage(const char *prog) {
    fprintf(stderr, "usage: %s arrive|aligned|unaligned [WARPS (1-%d) [arrive|wait [fence] [ds]]]\n", prog, MAX_WARPS);
    return 2;
}

int main(int argc, char **argv) {
    if (argc < 2 || argc > 6) return usage(argv[0]);
    int free_way = 0;
    while (free_way < 3 && strcmp(argv[1], FREES[free_way])) free_way++;
    char *end = NULL;
    const long warps = argc > 2 ? strtol(argv[2], &end, 10) : 1;
    const int ready_wait = argc > 3 && !strcmp(argv[3], "wait");
    int fence = 0, ds = 0;
    for (int a = 4; a < argc; a++) { /* fence, ds, or both in that order */
        if (!strcmp(argv[a], "fence") && !fence && !ds) fence = 1;
        else if (!strcmp(argv[a], "ds") && !ds) ds = 1;
        else return usage(argv[0]);
    }
    if (free_way == 3 || (argc > 2 && (*end || warps < 1 || warps > MAX_WARPS)) ||
        (argc > 3 && !ready_wait && strcmp(argv[3], "arrive")))
        return usage(argv[0]);
    char label[64] = "";
    for (int a = 1; a < argc; a++) /* the way, as called: the line bench.sh's handover.txt keeps */
        snprintf(label + strlen(label), sizeof label - strlen(label), "%s%s", a > 1 ? " " : "", argv[a]);
    float *out, host[32];
    if (cudaMalloc(&out, sizeof host) != cudaSuccess || cudaMemset(out, 0, sizeof host) != cudaSuccess) return 3;
    handover<<<1, 32 * (1 + (int)warps)>>>(out, (Free)free_way, (int)warps, ready_wait, fence, ds);
    const cudaError_t e = cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) {
        fprintf(stderr, "%s: CUDA error: %s\n", label, cudaGetErrorString(e));
        return 3;
    }
    /* lane 0 read tile[32 w + 31] = 32 w + 31 + v from each warp w in each visit v */
    float want = 0;
    for (int v = 0; v < VISITS; v++)
        for (int w = 0; w < warps; w++) want += 32 * w + 31 + v;
    printf("%s: out[0] = %g (%s)\n", label, host[0], host[0] == want ? "ok" : "wrong");
    return host[0] == want ? 0 : 1;
}
