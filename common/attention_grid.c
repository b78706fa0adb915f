/* attention_grid.c: the grid arithmetic of attention_grid.h. */
#include "attention_grid.h"

#include "arith.h"

long long attn_kv_blocks(int N, int Br, int Bc, int causal, long long i) {
    const long long Tc = ceil_div(N, Bc);
    if (!causal) return Tc;
    const long long last_row = (i + 1) * Br < N ? (i + 1) * Br - 1 : N - 1;
    return last_row / Bc + 1; /* <= Tc, since last_row <= N - 1 */
}

unsigned long long attn_keys_loaded(int N, int Br, int Bc, int causal) {
    const long long Tr = ceil_div(N, Br);
    if (!causal) return (unsigned long long)Tr * N;
    unsigned long long keys = 0;
    for (long long i = 0; i < Tr; i++) {
        const long long rows = Bc * attn_kv_blocks(N, Br, Bc, 1, i); /* whole blocks ...        */
        keys += (unsigned long long)(rows < N ? rows : N);          /* ... but the last is ragged */
    }
    return keys;
}
