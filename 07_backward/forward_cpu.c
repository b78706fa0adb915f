/* forward_cpu.c: the forward that feeds chapter 07's backward, on the CPU. Its O and L are the float64 reference's
 * (reference.h), rounded to fp32: the CPU versions of the backward need the forward's outputs, not its arithmetic
 * (chapter 03's CPU version is that kernel's arithmetic; the GPU runs the kernel itself, forward.cu). Its bytes are
 * counted where chapter 03's kernel loads and stores, at the forward's own tiles FWD_BR x FWD_BC (forward_tiles.h):
 * Q_i once per query block, K_j and V_j once per visit (with the causal mask, up to the key block that holds the query
 * block's last row), O_i and L_i once, only the real rows of a ragged tile. */
#include <stdlib.h>

#include "ch07.h"
#include "forward_tiles.h"
#include "host_tensor.h"

/* The bytes chapter 03's kernel moves for one head. */
static void fwd_head_bytes(int N, int d, int causal, IoBytes *io) {
    const size_t row = sizeof(float) * (size_t)d;
    for (int q0 = 0; q0 < N; q0 += FWD_BR) {
        const int q_rows = N - q0 < FWD_BR ? N - q0 : FWD_BR;
        io->read += row * q_rows; /* Q_i */
        for (int k0 = 0; k0 < N && (!causal || k0 <= q0 + q_rows - 1); k0 += FWD_BC)
            io->read += 2 * row * (size_t)(N - k0 < FWD_BC ? N - k0 : FWD_BC); /* K_j, V_j */
        io->write += (row + sizeof(float)) * q_rows; /* O_i, L_i */
    }
}

void fwd_forward_cpu(const Options *o, BwdHost *t, IoBytes *io, double *ms) {
    const double t0 = wall_ms();
    const size_t heads = (size_t)o->B * o->H, N = (size_t)o->N, d = (size_t)o->d;
    double *O = host_alloc(sizeof(double) * N * d, "a head's O"), *L = host_alloc(sizeof(double) * N, "a head's L");
    for (size_t h = 0; h < heads; h++) {
        const size_t at = h * N * d;
        reference_attention_head(t->Q + at, t->K + at, t->V + at, o->N, o->d, o->causal, O, L);
        for (size_t x = 0; x < N * d; x++) t->O[at + x] = (float)O[x];
        for (size_t r = 0; r < N; r++) t->L[h * N + r] = (float)L[r];
        fwd_head_bytes(o->N, o->d, o->causal, io);
    }
    free(O), free(L);
    *ms = wall_ms() - t0;
}
