/* model.h: chapter 05's closed forms: chapter 03's loop nest with 2-byte elements. Per head, with e = 2 bytes
 * (fp16 or bf16) and L in fp32:
 *     reads  = e d (N + 2 keys)      Q once, K_j and V_j for every K/V block visited (keys: attn_keys_loaded)
 *     writes = e N d + 4 N           O once, L once
 * The same closed form is every step's model: the steps change how the tensor cores are fed, not which bytes
 * move (a step's counted bytes equal it to the byte, in every test). Bc = 64 always; Br = 64, or 128 for
 * mma_async. */
#ifndef FA_CH05_MODEL_H
#define FA_CH05_MODEL_H

#include "io_bytes.h"
#include "options.h"
#include "report.h"
#include "tiles.h"

/* The chapter's kernels, one per step (TcKernel, tiles.h), move the same bytes and do the same arithmetic; they
 * differ in how the tensor cores are fed. */
#define TC_KERNEL_NAMES                                                                                      \
    "wmma, mma_staged, repack, o_registers, swizzle, mma_plain, unrolled_copy, edge_masks, mma, cp_async, mma_async"
#define TC_KERNEL_DEFAULT TC_KERNEL_MMA_ASYNC
/* --kernel, the chapter's option (chapter.c): the kernel it names, TC_KERNEL_DEFAULT without it. */
enum { CH05_OPT_KERNEL }; /* the index of --kernel among the chapter's options */
extern const ChapterOption ch05_options[];
extern const char *const tc_kernel_options[TC_KERNEL_COUNT + 1]; /* the words --kernel takes, by kernel; NULL last */
int tc_kernel_of(const Options *o);
/* The option's value ("wmma" .. "mma_async"), and the report's name: "flash_" and the option's value. */
const char *tc_kernel_option(int k);
const char *tc_kernel_name(int k);

IoBytes flash_tc_model_bytes(const Options *o);
IoBytes flash_tc_ideal_bytes(const Options *o); /* Q, K, V read once; O and L written once */
unsigned long long flash_tc_flops(const Options *o);       /* 4 B H N^2 d, half with the causal mask */
unsigned long long flash_tc_softmax_ops(const Options *o); /* 5 per unmasked score                   */
long long flash_tc_grid_blocks(const Options *o);

/* The shared-memory loads of the mma kernels from step 4 on (kernel >= TC_KERNEL_O_REGISTERS; steps 2 and 3 also
 * pass S_ij, P_ij or O_i through shared memory, which this does not count), counted the way ncu counts them (warp
 * instructions): ldmatrix.x4 per warp for Q_i's A fragments (once, or per K/V block where they are not kept in
 * registers: tiles.h), K_j's and V_j's B fragments ((d/16)(Bc/16) each per K/V block), and the epilogue's 16-byte
 * reads of O_i's staged rows (Br d / 256 per block). Chapter 04's rule gives each one 4 wavefronts, the least a
 * 512-byte warp load can take: an ldmatrix reads four 8 x 8 matrices, each 8 rows of one 16-byte chunk, and the
 * swizzle (chunk c of row r at c ^ (r mod 8); step 4: rows padded by 16 bytes) puts those 8 chunks in 8 different
 * groups of 4 banks; the epilogue's lanes read 4 whole 128- or 256-byte rows. N a multiple of Br (ragged last
 * blocks read fewer O rows). */
typedef struct {
    unsigned long long ldmatrix, other, wavefronts;
} TcSharedLoads;
TcSharedLoads flash_tc_shared_loads(const Options *o, int kernel);
int flash_tc_models(const Options *o, KernelModel *m);

#endif
