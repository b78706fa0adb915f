/* Step 10's hand-over of dQ_s (10_warp_specialized.cu), alone, under compute-sanitizer's racecheck: one "consumer"
 * warp stores a tile into shared memory and hands it over on a named barrier (READY), one "producer" warp reads it
 * and hands it back on another (FREE), for 4 visits. PTX orders both ways however each side meets a barrier: an
 * arrive's earlier accesses are performed, for the barrier's threads, when the barrier completes. racecheck does
 * not see it so where the producer arrives on FREE, as step 10's warp 1 does:
 *
 *   nvcc -arch=sm_90 -Icommon -o handover tests/ch07/racecheck_handover.cu
 *   compute-sanitizer --tool racecheck ./handover arrive    # the producer arrives on FREE (step 10): a hazard
 *   compute-sanitizer --tool racecheck ./handover sync      # the producer waits on FREE too: none
 *
 * bench.sh's tests stage runs both (racecheck_handover.txt); the chapter's README, step 10, reads what they say. */
#include <cstdio>
#include <cstring>

#include "ptx_sm90.cuh" /* named_bar_sync, named_bar_arrive: step 10's own */

#define READY 2
#define FREE 3
#define THREADS 64 /* both warps meet on both barriers */
#define VISITS 4

__global__ void handover(float *out, bool producer_syncs) {
    __shared__ float tile[32];
    const int lane = threadIdx.x % 32;
    if (threadIdx.x < 32) { /* the producer: step 10's warp 1 */
        /* the tile is free for the first store */
        if (producer_syncs) named_bar_sync(FREE, THREADS); else named_bar_arrive(FREE, THREADS);
        for (int v = 0; v < VISITS; v++) {
            named_bar_sync(READY, THREADS); /* the consumer's store is in */
            out[lane] += tile[31 - lane];
            __syncwarp(); /* the warp's reads are done before the tile goes back */
            if (v + 1 < VISITS) { /* the tile is free again */
                if (producer_syncs) named_bar_sync(FREE, THREADS); else named_bar_arrive(FREE, THREADS);
            }
        }
    } else { /* the consumer: step 10's consumer warps */
        for (int v = 0; v < VISITS; v++) {
            named_bar_sync(FREE, THREADS); /* the producer has read the visit before's */
            tile[lane] = lane + v;
            named_bar_arrive(READY, THREADS); /* the store is in */
        }
    }
}

int main(int argc, char **argv) {
    if (argc != 2 || (strcmp(argv[1], "arrive") && strcmp(argv[1], "sync"))) {
        fprintf(stderr, "usage: %s arrive|sync\n", argv[0]);
        return 2;
    }
    float *out, host[32];
    if (cudaMalloc(&out, sizeof host) != cudaSuccess || cudaMemset(out, 0, sizeof host) != cudaSuccess) return 3;
    handover<<<1, 64>>>(out, !strcmp(argv[1], "sync"));
    const cudaError_t e = cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) {
        fprintf(stderr, "CUDA error: %s\n", cudaGetErrorString(e));
        return 3;
    }
    /* lane 0 read tile[31] = 31 + v in each visit */
    const float want = 4 * 31 + 0 + 1 + 2 + 3;
    printf("%s: out[0] = %g (%s)\n", argv[1], host[0], host[0] == want ? "ok" : "wrong");
    return host[0] == want ? 0 : 1;
}
