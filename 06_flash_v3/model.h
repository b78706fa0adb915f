/* model.h: chapter 06's closed forms: chapter 05's loop nest and bytes (the same tiles, Br = Bc = 64, the same
 * loads; what changed is the instruction that multiplies). Per head, with e = 2 bytes (fp16 or bf16) and L in fp32:
 *     reads  = e d (N + 2 keys)      Q once, K_j and V_j for every K/V block visited (keys: attn_keys_loaded)
 *     writes = e N d + 4 N           O once, L once
 * and steps 7 and 8 (queue, tma_store) add their counter's 4 bytes read and 4 written per work item (the atomic
 * increment that claims the next one, Tr B H in all); step 9 (dispatch) moves the bytes of the kernel it runs. */
#ifndef FA_CH06_MODEL_H
#define FA_CH06_MODEL_H

#include "io_bytes.h"
#include "options.h"
#include "report.h"
#include "tiles.h" /* fa3_dispatch_small: step 9's rule */

/* The chapter's steps (--kernel NAME): each a kernel of its own, all moving the same bytes (but for steps 7-8's
 * counter) and doing the same arithmetic. */
typedef enum {
    FA3_KERNEL_WGMMA = 0,
    FA3_KERNEL_TMA = 1,
    FA3_KERNEL_WARP_SPECIALIZED = 2,
    FA3_KERNEL_PINGPONG = 3,
    FA3_KERNEL_OVERLAP = 4,
    FA3_KERNEL_ZIGZAG = 5,
    FA3_KERNEL_QUEUE = 6,
    FA3_KERNEL_TMA_STORE = 7,
    FA3_KERNEL_DISPATCH = 8,
    FA3_KERNEL_COUNT = 9
} Fa3Kernel;
#define FA3_KERNEL_DEFAULT FA3_KERNEL_DISPATCH /* the fastest measured (README, "Measured") */
/* The step whose kernel runs for step k at the tile Br: step 9 (dispatch) has none of its own, and runs step 2's
 * (tma) at Br = 64, step 8's (tma_store) at the persistent tiles (tiles.h); every other step its own. */
static inline int fa3_kernel_runs(int k, int Br) {
    if (k != FA3_KERNEL_DISPATCH) return k;
    return fa3_dispatch_small(Br) ? FA3_KERNEL_TMA : FA3_KERNEL_TMA_STORE;
}
/* Steps 3-8: a producer and consumer warpgroups on a persistent grid, step 3's tiles (tiles.h, FA3_WS_...). Of
 * the kernel that runs (fa3_kernel_runs). */
static inline int fa3_kernel_persistent(int k) { return k >= FA3_KERNEL_WARP_SPECIALIZED && k <= FA3_KERNEL_TMA_STORE; }
/* Steps 7-8: each next work item claimed from a counter in global memory (an atomic increment per item). */
static inline int fa3_kernel_claims(int k) { return k == FA3_KERNEL_QUEUE || k == FA3_KERNEL_TMA_STORE; }
enum { CH06_OPT_KERNEL }; /* the index of --kernel among the chapter's options */
extern const ChapterOption ch06_options[];
extern const char *const fa3_kernel_options[FA3_KERNEL_COUNT + 1]; /* the words --kernel takes, by kernel; NULL last */
/* The kernel --kernel names (FA3_KERNEL_DEFAULT without one). */
int fa3_kernel_of(const Options *o);
/* Kernel k's tiles for the problem o (d, N, the mask) without --br, --bc (ChapterOption.tiles_for of --kernel;
 * chapter.c). */
void fa3_default_tiles(int kernel, const Options *o, int *Br, int *Bc);
/* "wgmma", "tma", "warp_specialized", "pingpong", "overlap", "zigzag", "queue", "tma_store", "dispatch" (the
 * option's value), and the report's name: "flash_wgmma", ... */
const char *fa3_kernel_option(int k);
const char *fa3_kernel_name(int k);

IoBytes fa3_model_bytes(const Options *o);
IoBytes fa3_ideal_bytes(const Options *o);          /* Q, K, V read once; O and L written once */
unsigned long long fa3_flops(const Options *o);       /* 4 B H N^2 d, half with the causal mask  */
unsigned long long fa3_softmax_ops(const Options *o); /* 5 per unmasked score                    */
long long fa3_grid_blocks(const Options *o);

/* The wgmma instructions a Q tile's warpgroups issue per K/V block: d/16 for S (m64n{Bc}k16) and Bc/16 for O
 * (m64n{d}k16), each warpgroup (Br / 64 of them) on its 64 rows; and in all, for every Q tile of every head (N a
 * multiple of the tiles or not: each visited K/V block costs the same). */
typedef struct {
    unsigned long long per_kv_block, total;
} Fa3Wgmma;
Fa3Wgmma fa3_wgmma_count(const Options *o);

int fa3_models(const Options *o, KernelModel *m);

/* How the persistent grid's blocks take their work items: steps 3-5 (block b: items b, b + G, ...), step 6 (odd
 * rounds right to left), steps 7-8 (each next item, in L2 sections under the causal mask, to the block that is free
 * first). */
typedef enum { FA3_ORDER_STRIDE, FA3_ORDER_ZIGZAG, FA3_ORDER_QUEUE } Fa3Order;
/* The balance of the persistent grid's work (steps 3-8): the K/V blocks of the most loaded of `blocks` blocks over
 * the mean, the items handed out in `order`; for the queue, a block is free when it has done its K/V blocks (one
 * K/V block costs the same everywhere; the cost of an item apart from them is left out). 1 is perfect balance;
 * the kernel's time follows its most loaded block. */
double fa3_schedule_balance(const Options *o, int blocks, Fa3Order order);

#endif
