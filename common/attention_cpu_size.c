/* attention_cpu_size.c: the CPU fallback's size of attention_cpu_size.h. */
#include "attention_cpu_size.h"

void attn_shrink_for_cpu(Options *o, unsigned long long (*flops)(const Options *o)) {
    const double cpu_run_flops = 1.2e9;
    if ((double)flops(o) <= cpu_run_flops) return;
    o->B = 1;
    if (o->H > 4) o->H = 4;
    const int N = o->N, tile = o->Br > o->Bc ? o->Br : o->Bc; /* powers of two: their lcm */
    for (long long target = N; (double)flops(o) > cpu_run_flops && target > 64; target /= 2)
        o->N = shrink_seq_keeping_tiles(N, target, tile);
}
