/* bridge.c: from the online softmax to FlashAttention, on the CPU.
 *
 * Attention for one query row q is o = sum_j softmax(s)_j V_j with s_j = scale * q . K_j. The online softmax
 * keeps (m, l) while the scores stream past; the output needs one more thing: the accumulator
 * acc = sum_j exp(s_j - m) V_j, which, like l, is a sum of terms that were computed against an older maximum.
 * When a block of keys raises the maximum from m_old to m_new, every earlier term must be multiplied by
 * exp(m_old - m_new): the same factor that rescales l. At the end o = acc / l.
 *
 * Over K/V blocks j = 0, 1, ..., Tc-1 of Bc keys (the last one may be shorter):
 *     S_j     = scale * q K_j^T                       (Bc scores, never more)
 *     m_new   = max(m, max(S_j))
 *     acc     = acc * exp(m - m_new) + sum_c exp(S_j[c] - m_new) V_j[c]
 *     l       = l   * exp(m - m_new) + sum_c exp(S_j[c] - m_new)
 *     m       = m_new
 * then o = acc / l and lse = m + log(l). FlashAttention-2 runs exactly this loop for a block of Br query rows
 * at a time, with S_j and acc on chip (chapter 02). */
#include <math.h>
#include <stdlib.h>

#include "ch01.h"
#include "host_tensor.h"

float attention_row_online(const float *q, const float *K, const float *V, int n_keys, int d, int Bc,
                           float *o) {
    const float scale = 1.0f / sqrtf((float)d);
    float *S_j = (float *)host_alloc(sizeof(float) * (size_t)Bc, "S_j");
    float m = -INFINITY, l = 0.f;
    for (int x = 0; x < d; x++) o[x] = 0.f; /* o is the accumulator until the final division */

    for (int j0 = 0; j0 < n_keys; j0 += Bc) {
        const int bc = n_keys - j0 < Bc ? n_keys - j0 : Bc;
        float m_block = -INFINITY;
        for (int c = 0; c < bc; c++) {
            const float *k_c = K + (size_t)(j0 + c) * d;
            float dot = 0.f;
            for (int x = 0; x < d; x++) dot += q[x] * k_c[x];
            S_j[c] = scale * dot;
            m_block = fmaxf(m_block, S_j[c]);
        }
        const float m_new = fmaxf(m, m_block);
        const float rescale = expf(m - m_new); /* 0 for the first block (m = -inf): nothing to rescale yet */
        l *= rescale;
        for (int x = 0; x < d; x++) o[x] *= rescale;
        for (int c = 0; c < bc; c++) {
            const float p = expf(S_j[c] - m_new);
            const float *v_c = V + (size_t)(j0 + c) * d;
            l += p;
            for (int x = 0; x < d; x++) o[x] += p * v_c[x];
        }
        m = m_new;
    }
    for (int x = 0; x < d; x++) o[x] /= l;
    free(S_j);
    return m + logf(l);
}
