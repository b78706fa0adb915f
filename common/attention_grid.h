/* attention_grid.h: the FlashAttention-2 grid's arithmetic, for the models and the --model lines. */
#ifndef FA_ATTENTION_GRID_H
#define FA_ATTENTION_GRID_H

#ifdef __cplusplus
extern "C" {
#endif

/* K/V blocks that query block i visits (all Tc, or with the causal mask those on or below the diagonal), and
 * the key rows one head loads in all (the last block ragged); a thread block per query block. */
long long attn_kv_blocks(int N, int Br, int Bc, int causal, long long i);
unsigned long long attn_keys_loaded(int N, int Br, int Bc, int causal);

#ifdef __cplusplus
}
#endif
#endif
