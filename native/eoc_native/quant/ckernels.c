/* eoc's quantized CPU kernels in C: the kernels of kernels.py (numba), the same layouts and the
 * same arithmetic (numba's fastmath may reorder a sum), compiled once with the machine's own C compiler
 * (cbuild.py) so that running a model loads neither numba nor LLVM.
 *
 * Layouts (blocks.py): a 4-bit matrix is qs[tile][block][16][T] nibble pairs (byte j holds
 * weight j in its low nibble and weight j + 16 in its high one), an 8-bit one qs[tile][block][32][T]
 * signed bytes; the scales d (and minimums m) are [tile][block][T] float16 bits. A product
 * out = x @ W runs one task per tile of T output columns.
 *
 * Threads: each parallel loop runs on `nth` OpenMP threads, the count eoc sets
 * (eoc_native/llm/threads.py). Without OpenMP the loops run on one thread.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* each parallel loop's function takes its thread count as `nth` */
#ifdef _OPENMP
#define PARALLEL_FOR _Pragma("omp parallel for num_threads(nth) schedule(static)")
#else
#define PARALLEL_FOR (void)nth;
#endif

/* float16 bits to float32, exactly for every finite value (scales are finite): the bits moved
 * into float32's places, then scaled by 2^112 (the difference of the exponent biases). */
static inline float h2f(uint16_t h) {
    uint32_t bits = (uint32_t)(h & 0x7fff) << 13;
    float mag;
    memcpy(&mag, &bits, 4);
    mag *= 0x1p112f;
    memcpy(&bits, &mag, 4);
    bits |= (uint32_t)(h & 0x8000) << 16;
    float out;
    memcpy(&out, &bits, 4);
    return out;
}

void eoc_q4_matvec(const uint8_t *qs, const uint16_t *d, const uint16_t *m, const float *x,
                   float *out, int64_t nt, int64_t nb, int64_t t, int nth) {
    float *xs = malloc((size_t)nb * sizeof(float));
    if (!xs) return;
    for (int64_t b = 0; b < nb; b++) {
        float s = 0.0f;
        for (int j = 0; j < 32; j++) s += x[b * 32 + j];
        xs[b] = s;
    }
    PARALLEL_FOR
    for (int64_t tile = 0; tile < nt; tile++) {
        float acc[t], tmp[t];
        for (int64_t i = 0; i < t; i++) acc[i] = 0.0f;
        for (int64_t b = 0; b < nb; b++) {
            const uint8_t *blk = qs + ((tile * nb + b) * 16) * t;
            for (int64_t i = 0; i < t; i++) tmp[i] = 0.0f;
            for (int j = 0; j < 16; j++) {
                const float lo = x[b * 32 + j], hi = x[b * 32 + 16 + j];
                const uint8_t *row = blk + (int64_t)j * t;
                for (int64_t i = 0; i < t; i++) {
                    const uint8_t v = row[i];
                    tmp[i] += (float)(v & 15) * lo + (float)(v >> 4) * hi;
                }
            }
            const uint16_t *db = d + (tile * nb + b) * t, *mb = m + (tile * nb + b) * t;
            const float sb = xs[b];
            for (int64_t i = 0; i < t; i++) acc[i] += h2f(db[i]) * tmp[i] + h2f(mb[i]) * sb;
        }
        memcpy(out + tile * t, acc, (size_t)t * sizeof(float));
    }
    free(xs);
}

void eoc_q8_matvec(const int8_t *qs, const uint16_t *d, const float *x, float *out, int64_t nt,
                   int64_t nb, int64_t t, int nth) {
    PARALLEL_FOR
    for (int64_t tile = 0; tile < nt; tile++) {
        float acc[t], tmp[t];
        for (int64_t i = 0; i < t; i++) acc[i] = 0.0f;
        for (int64_t b = 0; b < nb; b++) {
            const int8_t *blk = qs + ((tile * nb + b) * 32) * t;
            for (int64_t i = 0; i < t; i++) tmp[i] = 0.0f;
            for (int j = 0; j < 32; j++) {
                const float xj = x[b * 32 + j];
                const int8_t *row = blk + (int64_t)j * t;
                for (int64_t i = 0; i < t; i++) tmp[i] += (float)row[i] * xj;
            }
            const uint16_t *db = d + (tile * nb + b) * t;
            for (int64_t i = 0; i < t; i++) acc[i] += h2f(db[i]) * tmp[i];
        }
        memcpy(out + tile * t, acc, (size_t)t * sizeof(float));
    }
}

/* Tile a GGUF tensor's blocks for the kernels (blocks.py's layout): raw holds n_out rows of nb
 * blocks of `size` bytes; bytes [q0, q0 + qlen) of each block go to qs[tile][b][j][i], its
 * float16 scale (bytes 0-1) to d[tile][b][i] and, where m_at >= 0, the float16 at m_at to
 * m[tile][b][i]. n_out is whole tiles of t columns. */
void eoc_tile_blocks(const uint8_t *raw, int64_t n_out, int64_t nb, int64_t size, int64_t q0,
                     int64_t qlen, int64_t m_at, uint8_t *qs, uint16_t *d, uint16_t *m, int64_t t,
                     int nth) {
    const int64_t nt = n_out / t;
    PARALLEL_FOR
    for (int64_t tile = 0; tile < nt; tile++) {
        for (int64_t b = 0; b < nb; b++) {
            uint8_t *q = qs + (tile * nb + b) * qlen * t;
            uint16_t *dd = d + (tile * nb + b) * t, *mm = m ? m + (tile * nb + b) * t : 0;
            for (int64_t i = 0; i < t; i++) {
                const uint8_t *blk = raw + ((tile * t + i) * nb + b) * size;
                dd[i] = (uint16_t)(blk[0] | (blk[1] << 8));
                if (mm) mm[i] = (uint16_t)(blk[m_at] | (blk[m_at + 1] << 8));
                for (int64_t j = 0; j < qlen; j++) q[j * t + i] = blk[q0 + j];
            }
        }
    }
}

/* out (n_in, nt * t) float32 = the matrix, dequantized. */
void eoc_q4_dequant(const uint8_t *qs, const uint16_t *d, const uint16_t *m, float *out,
                    int64_t nt, int64_t nb, int64_t t, int nth) {
    const int64_t width = nt * t;
    PARALLEL_FOR
    for (int64_t tile = 0; tile < nt; tile++) {
        const int64_t c = tile * t;
        for (int64_t b = 0; b < nb; b++) {
            const uint16_t *db = d + (tile * nb + b) * t, *mb = m + (tile * nb + b) * t;
            for (int j = 0; j < 16; j++) {
                const uint8_t *row = qs + ((tile * nb + b) * 16 + j) * t;
                float *lo = out + (b * 32 + j) * width + c, *hi = out + (b * 32 + 16 + j) * width + c;
                for (int64_t i = 0; i < t; i++) {
                    const float di = h2f(db[i]), mi = h2f(mb[i]);
                    lo[i] = di * (float)(row[i] & 15) + mi;
                    hi[i] = di * (float)(row[i] >> 4) + mi;
                }
            }
        }
    }
}

void eoc_q8_dequant(const int8_t *qs, const uint16_t *d, float *out, int64_t nt, int64_t nb,
                    int64_t t, int nth) {
    const int64_t width = nt * t;
    PARALLEL_FOR
    for (int64_t tile = 0; tile < nt; tile++) {
        const int64_t c = tile * t;
        for (int64_t b = 0; b < nb; b++) {
            const uint16_t *db = d + (tile * nb + b) * t;
            for (int j = 0; j < 32; j++) {
                const int8_t *row = qs + ((tile * nb + b) * 32 + j) * t;
                float *o = out + (b * 32 + j) * width + c;
                for (int64_t i = 0; i < t; i++) o[i] = h2f(db[i]) * (float)row[i];
            }
        }
    }
}

void eoc_rms_norm_row(const float *x, const float *weight, float eps, float *out, int64_t n) {
    double ss = 0.0;
    for (int64_t i = 0; i < n; i++) ss += (double)x[i] * (double)x[i];
    const float scale = (float)(1.0 / sqrt(ss / (double)n + (double)eps));
    for (int64_t i = 0; i < n; i++) out[i] = x[i] * scale * weight[i];
}

void eoc_silu_mul(const float *gate_up, float *out, int64_t h) {
    for (int64_t i = 0; i < h; i++) {
        const float g = gate_up[i];
        out[i] = g / (1.0f + expf(-g)) * gate_up[h + i];
    }
}

/* One new token's attention in one layer: rotary positions (adjacent pairs), the KV cache
 * (n_ctx, n_kv, hd) written at pos, the heads in parallel; query head h reads kv head
 * h / (n_heads / n_kv). */
void eoc_decode_attention(const float *qkv, float *cache_k, float *cache_v, int64_t pos,
                          const float *cos_, const float *sin_, int64_t n_heads, int64_t n_kv,
                          int64_t hd, float scale, float *out, int nth) {
    const int64_t group = n_heads / n_kv, half = hd / 2;
    const int64_t k0 = n_heads * hd, v0 = k0 + n_kv * hd;
    for (int64_t g = 0; g < n_kv; g++) {
        float *ck = cache_k + (pos * n_kv + g) * hd, *cv = cache_v + (pos * n_kv + g) * hd;
        for (int64_t j = 0; j < half; j++) {
            const float x0 = qkv[k0 + g * hd + 2 * j], x1 = qkv[k0 + g * hd + 2 * j + 1];
            ck[2 * j] = x0 * cos_[j] - x1 * sin_[j];
            ck[2 * j + 1] = x0 * sin_[j] + x1 * cos_[j];
        }
        for (int64_t j = 0; j < hd; j++) cv[j] = qkv[v0 + g * hd + j];
    }
    PARALLEL_FOR
    for (int64_t h = 0; h < n_heads; h++) {
        const int64_t g = h / group, base = h * hd;
        float q[hd], o[hd];
        float *scores = malloc((size_t)(pos + 1) * sizeof(float));
        if (!scores) continue;
        for (int64_t j = 0; j < half; j++) {
            const float x0 = qkv[base + 2 * j], x1 = qkv[base + 2 * j + 1];
            q[2 * j] = x0 * cos_[j] - x1 * sin_[j];
            q[2 * j + 1] = x0 * sin_[j] + x1 * cos_[j];
        }
        float best = -INFINITY;
        for (int64_t t = 0; t <= pos; t++) {
            const float *k = cache_k + (t * n_kv + g) * hd;
            float acc = 0.0f;
            for (int64_t j = 0; j < hd; j++) acc += q[j] * k[j];
            acc *= scale;
            scores[t] = acc;
            if (acc > best) best = acc;
        }
        float total = 0.0f;
        for (int64_t t = 0; t <= pos; t++) {
            const float e = expf(scores[t] - best);
            scores[t] = e;
            total += e;
        }
        for (int64_t j = 0; j < hd; j++) o[j] = 0.0f;
        for (int64_t t = 0; t <= pos; t++) {
            const float w = scores[t] / total;
            const float *v = cache_v + (t * n_kv + g) * hd;
            for (int64_t j = 0; j < hd; j++) o[j] += w * v[j];
        }
        memcpy(out + base, o, (size_t)hd * sizeof(float));
        free(scores);
    }
}

/* A 4-bit matrix as the kernels take it. */
typedef struct {
    const uint8_t *qs;
    const uint16_t *d, *m;
    int64_t nt, nb, t;
} eoc_q4;

/* One transformer block's weights and its KV cache. */
typedef struct {
    const float *attn_norm, *ffn_norm;
    eoc_q4 qkv, wo, gate_up, down;
    float *cache_k, *cache_v;
} eoc_layer;

static void q4(const eoc_q4 *w, const float *x, float *out, int nth) {
    eoc_q4_matvec(w->qs, w->d, w->m, x, out, w->nt, w->nb, w->t, nth);
}

/* One token through n_layers blocks, x (dim) updated in place: per block
 * x += wo(attention(qkv(rms_norm(x)))), then x += down(silu(gate) * up) of rms_norm(x).
 * scratch holds dim + qkv + q_size + max(wo, down) + gate_up + gate_up / 2 floats (padded). */
void eoc_decode_layers(const eoc_layer *layers, int64_t n_layers, float *x, int64_t dim,
                       float eps, int64_t pos, const float *cos_, const float *sin_,
                       int64_t n_heads, int64_t n_kv, int64_t hd, float scale, int64_t hidden,
                       float *scratch, int nth) {
    for (int64_t l = 0; l < n_layers; l++) {
        const eoc_layer *ly = &layers[l];
        const int64_t n_qkv = ly->qkv.nt * ly->qkv.t, n_gu = ly->gate_up.nt * ly->gate_up.t;
        const int64_t n_wo = ly->wo.nt * ly->wo.t, n_dn = ly->down.nt * ly->down.t;
        const int64_t n_o = n_wo > n_dn ? n_wo : n_dn, q_size = n_heads * hd;
        float *h = scratch, *b_qkv = h + dim, *heads = b_qkv + n_qkv, *b_o = heads + q_size;
        float *b_gu = b_o + n_o, *b_hid = b_gu + n_gu;
        eoc_rms_norm_row(x, ly->attn_norm, eps, h, dim);
        q4(&ly->qkv, h, b_qkv, nth);
        eoc_decode_attention(b_qkv, ly->cache_k, ly->cache_v, pos, cos_, sin_, n_heads, n_kv, hd,
                             scale, heads, nth);
        q4(&ly->wo, heads, b_o, nth);
        for (int64_t i = 0; i < dim; i++) x[i] += b_o[i];
        eoc_rms_norm_row(x, ly->ffn_norm, eps, h, dim);
        q4(&ly->gate_up, h, b_gu, nth);
        eoc_silu_mul(b_gu, b_hid, hidden);
        q4(&ly->down, b_hid, b_o, nth);
        for (int64_t i = 0; i < dim; i++) x[i] += b_o[i];
    }
}

/* float32 to float16 bits, rounded to nearest even as numpy's astype(float16) rounds: values
 * past the largest half become infinity, those below the smallest normal half subnormals. */
static inline uint16_t f2h(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    const uint32_t sign = x & 0x80000000u;
    x ^= sign;
    uint16_t out;
    if (x >= (127u + 16u) << 23) { /* 2^16 and up: infinity (NaN stays NaN) */
        out = x > 255u << 23 ? 0x7e00 : 0x7c00;
    } else if (x < 113u << 23) { /* below 2^-14: a subnormal half, rounded by the float add */
        const uint32_t magic_bits = ((127u - 15u) + (23u - 10u) + 1u) << 23;
        float v, magic;
        memcpy(&v, &x, 4);
        memcpy(&magic, &magic_bits, 4);
        v += magic;
        uint32_t y;
        memcpy(&y, &v, 4);
        out = (uint16_t)(y - magic_bits);
    } else { /* a normal half: exponent rebiased, the 13 dropped bits rounded to nearest even */
        const uint32_t odd = (x >> 13) & 1u;
        x += ((uint32_t)(15 - 127) << 23) + 0xfffu + odd;
        out = (uint16_t)(x >> 13);
    }
    return (uint16_t)(out | (sign >> 16));
}

/* Q4_K super-blocks (144 bytes: d, dmin, 12 bytes of 6-bit scales and minimums, 128 of nibbles)
 * to Q4_1 blocks (20 bytes: D, M, 16 nibble pairs), eight a super-block, as kquants.py's
 * q4_k_to_q4_1: D = half(d * sc), M = half(-(dmin * mn)), the same nibbles. */
void eoc_q4_k_to_q4_1(const uint8_t *src, uint8_t *dst, int64_t n, int nth) {
    PARALLEL_FOR
    for (int64_t k = 0; k < n; k++) {
        const uint8_t *b = src + k * 144, *p = b + 4, *qs = b + 16;
        const float d = h2f((uint16_t)(b[0] | (b[1] << 8)));
        const float dmin = h2f((uint16_t)(b[2] | (b[3] << 8)));
        for (int s = 0; s < 8; s++) {
            const uint8_t sc = s < 4 ? p[s] & 63 : (p[s + 4] & 0xF) | ((p[s - 4] >> 6) << 4);
            const uint8_t mn = s < 4 ? p[s + 4] & 63 : (p[s + 4] >> 4) | ((p[s] >> 6) << 4);
            const uint16_t hd = f2h(d * (float)sc), hm = f2h(-(dmin * (float)mn));
            uint8_t *o = dst + (k * 8 + s) * 20;
            o[0] = (uint8_t)hd, o[1] = (uint8_t)(hd >> 8), o[2] = (uint8_t)hm, o[3] = (uint8_t)(hm >> 8);
            /* sub-block 2j is run j's low nibbles, 2j + 1 its high ones; weight i and i + 16 of
             * the sub-block share output byte i */
            const uint8_t *run = qs + (s / 2) * 32;
            const int shift = (s % 2) * 4;
            for (int i = 0; i < 16; i++)
                o[4 + i] = (uint8_t)(((run[i] >> shift) & 0xF) | (((run[i + 16] >> shift) & 0xF) << 4));
        }
    }
}

/* Q6_K super-blocks (210 bytes: 128 of low nibbles, 64 of high pairs, 16 int8 scales, d) to
 * Q8_0 blocks (34 bytes: d, 32 int8), eight a super-block, as kquants.py's q6_k_to_q8_0:
 * w = q * sc * d in float32, then d8 = max|w| / 127, q8 = sign(x) * floor(|x| + 0.5) with
 * x = w * (1 / d8) (0 where d8 is 0). Output block 4h + r holds run r of half h. */
void eoc_q6_k_to_q8_0(const uint8_t *src, uint8_t *dst, int64_t n, int nth) {
    PARALLEL_FOR
    for (int64_t k = 0; k < n; k++) {
        const uint8_t *b = src + k * 210;
        const int8_t *scales = (const int8_t *)(b + 192);
        const float d = h2f((uint16_t)(b[208] | (b[209] << 8)));
        for (int h = 0; h < 2; h++) {
            const uint8_t *ql = b + 64 * h, *qh = b + 128 + 32 * h;
            for (int r = 0; r < 4; r++) {
                float w[32], amax = 0.0f;
                for (int l = 0; l < 32; l++) {
                    const uint8_t lo = r % 2 ? ql[32 + l] : ql[l];
                    const int q = ((r < 2 ? lo & 0xF : lo >> 4) | (((qh[l] >> (2 * r)) & 3) << 4)) - 32;
                    w[l] = (float)q * (float)scales[8 * h + 2 * r + l / 16] * d;
                    const float a = fabsf(w[l]);
                    if (a > amax) amax = a;
                }
                const float d8 = amax / 127.0f, inv = d8 != 0.0f ? 1.0f / d8 : 0.0f;
                const uint16_t hd = f2h(d8);
                uint8_t *o = dst + (k * 8 + 4 * h + r) * 34;
                o[0] = (uint8_t)hd, o[1] = (uint8_t)(hd >> 8);
                for (int l = 0; l < 32; l++) {
                    const float x = w[l] * inv, v = floorf(fabsf(x) + 0.5f);
                    o[2 + l] = (uint8_t)(int8_t)(x < 0.0f ? -v : v);
                }
            }
        }
    }
}

int eoc_kernels_openmp(void) {
#ifdef _OPENMP
    return 1;
#else
    return 0;
#endif
}
