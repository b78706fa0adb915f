/* Step 10's stages of L_i and D_i (10_warp_specialized.cu), alone, under compute-sanitizer: a "producer" warp stores
 * a row of floats into one of two stages and arrives on the stage's `full` mbarrier (each lane), "consumer" warps wait
 * there, every lane reads its element, and they release the stage on its `empty` mbarrier, where the producer waits
 * before it fills the stage again; 4 visits, so that each stage is filled twice.
 *
 *   stage_release lane0|syncwarp|every [WARPS]
 *
 * How a consumer warp releases the stage:
 *   lane0     lane 0 arrives, after the warp's reads (step 10 until 2026-12-06). An arrival releases the arriving
 *             thread's own earlier accesses: the other lanes' reads are ordered before the producer's next stores
 *             by nothing PTX promises.
 *   syncwarp  __syncwarp(), then lane 0 arrives: __syncwarp orders the lanes' reads before lane 0's arrival, which
 *             PTX's rules carry on to the producer.
 *   every     every lane arrives (the mbarrier counts 32 arrivals a warp): each releases its own read. Step 10's way.
 * WARPS, the consumer warps, 1 to 8 (default 8, step 10's).
 *
 *   nvcc -arch=sm_90 -Icommon -o stage_release tests/ch07/stage_release.cu
 *   compute-sanitizer --tool racecheck ./stage_release lane0
 *
 * bench.sh's tests stage runs each way under racecheck and synccheck (stage_release.txt); the chapter's README,
 * step 10, reads what they say. */
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "ptx_sm90.cuh" /* mbar_init, mbar_init_fence, mbar_arrive, mbar_wait, smem_addr */

#define STAGES 2
#define VISITS 4
#define MAX_WARPS 8
#define ROW (32 * MAX_WARPS) /* a stage: one float for each consumer thread */

enum Way { LANE0, SYNCWARP, EVERY };
static const char *const WAYS[] = {"lane0", "syncwarp", "every"};

/* Warp 0 is the producer (step 10's copying warp), warps 1 to `warps` the consumers. */
__global__ void stage_release(float *out, Way way, int warps) {
    __shared__ float stage[STAGES][ROW];
    __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES];
    const int lane = threadIdx.x % 32;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; s++) {
            mbar_init(smem_addr(&full[s]), 32);                                   /* each producer lane */
            mbar_init(smem_addr(&empty[s]), way == EVERY ? 32 * warps : warps); /* each consumer thread, or warp */
        }
        mbar_init_fence();
    }
    __syncthreads(); /* the mbarriers are initialised before anyone uses them */
    if (threadIdx.x < 32) { /* the producer */
        for (int v = 0; v < VISITS; v++) {
            const int s = v % STAGES;
            /* the consumers have read the stage's visit before (from v = STAGES on) */
            if (v >= STAGES) mbar_wait(smem_addr(&empty[s]), (unsigned)((v / STAGES - 1) % 2));
            for (int r = lane; r < 32 * warps; r += 32) stage[s][r] = (float)(v * ROW + r);
            mbar_arrive(smem_addr(&full[s])); /* this lane's stores, released to the threads that wait */
        }
    } else { /* the consumers */
        const int c = threadIdx.x - 32;
        float sum = 0.f;
        for (int v = 0; v < VISITS; v++) {
            const int s = v % STAGES;
            mbar_wait(smem_addr(&full[s]), (unsigned)(v / STAGES % 2)); /* the stage's visit v has been stored */
            sum += stage[s][(c + 32 * v) % (32 * warps)];
            if (way == EVERY) {
                mbar_arrive(smem_addr(&empty[s]));
            } else {
                if (way == SYNCWARP) __syncwarp(); /* the warp's reads, ordered before lane 0's arrival */
                if (lane == 0) mbar_arrive(smem_addr(&empty[s]));
            }
        }
        out[c] = sum;
    }
}

static int usage(const char *prog) {
    fprintf(stderr, "usage: %s lane0|syncwarp|every [WARPS (1-%d)]\n", prog, MAX_WARPS);
    return 2;
}

int main(int argc, char **argv) {
    if (argc < 2 || argc > 3) return usage(argv[0]);
    int way = 0;
    while (way < 3 && strcmp(argv[1], WAYS[way])) way++;
    char *end = NULL;
    const long warps = argc > 2 ? strtol(argv[2], &end, 10) : MAX_WARPS;
    if (way == 3 || (argc > 2 && (*end || warps < 1 || warps > MAX_WARPS))) return usage(argv[0]);
    char label[32] = "";
    for (int a = 1; a < argc; a++) /* the way, as called: the line bench.sh's stage_release.txt keeps */
        snprintf(label + strlen(label), sizeof label - strlen(label), "%s%s", a > 1 ? " " : "", argv[a]);
    float *out, host[ROW];
    const int n = 32 * (int)warps;
    if (cudaMalloc(&out, sizeof host) != cudaSuccess || cudaMemset(out, 0, sizeof host) != cudaSuccess) return 3;
    stage_release<<<1, 32 + n>>>(out, (Way)way, (int)warps);
    const cudaError_t e = cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) {
        fprintf(stderr, "%s: CUDA error: %s\n", label, cudaGetErrorString(e));
        return 3;
    }
    /* consumer thread c read element (c + 32 v) % n of visit v, which holds v ROW + that */
    int wrong = 0;
    for (int c = 0; c < n; c++) {
        float want = 0.f;
        for (int v = 0; v < VISITS; v++) want += (float)(v * ROW + (c + 32 * v) % n);
        wrong += host[c] != want;
    }
    printf("%s: %d of %d sums wrong (%s)\n", label, wrong, n, wrong ? "wrong" : "ok");
    return wrong ? 1 : 0;
}
