/* Step 10's hand-over of dQ_s (10_warp_specialized.cu), alone, under compute-sanitizer: one "consumer" warp stores a
 * tile into shared memory and hands it over on a named barrier (READY: it arrives, the producer waits), one "producer"
 * warp reads it and hands it back on another (FREE), for 4 visits. Three ways to meet FREE, each visit's start:
 *
 *   arrive     the producer arrives (bar.arrive), the consumer waits (bar.sync). Right by PTX's rules (an arrive's
 *              earlier accesses are performed, for the barrier's threads, when the barrier completes), but racecheck
 *              does not follow that order through two barriers, and reports the reads against the next stores.
 *   aligned    both wait (bar.sync), each at its own instruction: bar.sync is barrier.sync.aligned, which PTX allows
 *              only where every thread meets the barrier at the same instruction; synccheck reports it.
 *   unaligned  both wait (barrier.sync): step 10's way.
 *
 *   nvcc -arch=sm_90 -Icommon -o handover tests/ch07/handover.cu
 *   compute-sanitizer --tool racecheck ./handover arrive|aligned|unaligned
 *   compute-sanitizer --tool synccheck ./handover arrive|aligned|unaligned
 *
 * bench.sh's tests stage runs all six (handover.txt); the chapter's README, step 10, reads what they say. */
#include <cstdio>
#include <cstring>

#include "ptx_sm90.cuh" /* named_bar_sync, named_bar_arrive, named_bar_sync_unaligned: step 10's own */

#define READY 2
#define FREE 3
#define THREADS 64 /* both warps meet on both barriers */
#define VISITS 4

enum Way { ARRIVE, ALIGNED, UNALIGNED };
static const char *const WAYS[] = {"arrive", "aligned", "unaligned"};

__global__ void handover(float *out, Way way) {
    __shared__ float tile[32];
    const int lane = threadIdx.x % 32;
    if (threadIdx.x < 32) { /* the producer: step 10's warp 1 */
        for (int v = 0; v < VISITS; v++) {
            /* the tile is free for visit v's store: the producer has read the visit before's */
            if (way == ARRIVE) named_bar_arrive(FREE, THREADS);
            else if (way == ALIGNED) named_bar_sync(FREE, THREADS);
            else named_bar_sync_unaligned(FREE, THREADS);
            named_bar_sync(READY, THREADS); /* the consumer's store is in */
            out[lane] += tile[31 - lane];
            __syncwarp(); /* the warp's reads are done before the next visit hands the tile back */
        }
    } else { /* the consumer: step 10's consumer warps */
        for (int v = 0; v < VISITS; v++) {
            /* the producer has read the visit before's */
            if (way == UNALIGNED) named_bar_sync_unaligned(FREE, THREADS);
            else named_bar_sync(FREE, THREADS);
            tile[lane] = lane + v;
            named_bar_arrive(READY, THREADS); /* the store is in */
        }
    }
}

int main(int argc, char **argv) {
    int way = 0;
    while (argc == 2 && way < 3 && strcmp(argv[1], WAYS[way])) way++;
    if (argc != 2 || way == 3) {
        fprintf(stderr, "usage: %s arrive|aligned|unaligned\n", argv[0]);
        return 2;
    }
    float *out, host[32];
    if (cudaMalloc(&out, sizeof host) != cudaSuccess || cudaMemset(out, 0, sizeof host) != cudaSuccess) return 3;
    handover<<<1, 64>>>(out, (Way)way);
    const cudaError_t e = cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) {
        fprintf(stderr, "%s: CUDA error: %s\n", argv[1], cudaGetErrorString(e));
        return 3;
    }
    /* lane 0 read tile[31] = 31 + v in each visit */
    const float want = VISITS * 31 + 0 + 1 + 2 + 3;
    printf("%s: out[0] = %g (%s)\n", argv[1], host[0], host[0] == want ? "ok" : "wrong");
    return host[0] == want ? 0 : 1;
}
