/* A BERT sentence encoder (all-MiniLM-L6-v2's shape: post-norm blocks, GELU, mean pooling) on
 * 8-bit weights and AVX-512 VNNI, one text per call: what the kv's miss path waits for.
 *
 * Every linear layer's weights are int8, one scale per output column (symmetric, round to
 * nearest); each input row is quantized to uint8 on the fly, with its own scale and zero point
 * (asymmetric, so a GELU's output, almost all positive, keeps its 8 bits). A product is then
 *   out[m][n] = s_m * w_n * (sum_k a[m][k] * q[n][k] - z_m * sum_k q[n][k]) + bias[n]
 * and vpdpbusd sums the uint8 x int8 products in 32 bits exactly. Everything else (layer norm,
 * attention, GELU, pooling) is float32.
 *
 * Weight layout (encoder.py packs it): q[N/64][K/4][64][4]: for each panel of 64 output columns
 * and each group of 4 inputs, 64 columns x 4 bytes, so one 64-byte load holds 16 columns' 4
 * weights, the lanes vpdpbusd multiplies by 4 bytes of a row broadcast. N % 64 == 0, K % 4 == 0.
 *
 * Where the CPU has AMX (Intel's tile unit: Sapphire Rapids and later) and Linux lets this process
 * use it, a product of 16 rows runs on tiles instead (linear_amx): tdpbusd multiplies 16 rows of
 * 64 uint8 inputs by 64 inputs x 16 columns of int8 weights, sums in 32 bits exactly as vpdpbusd
 * does, so both paths give the same vector bit for bit; the weights' packed layout is already a
 * tile's (each 64-byte row of a B tile is one group of 4 inputs for 16 columns, rows 256 bytes
 * apart). eoc_encoder_amx() asks Linux for the tiles once and says whether they were granted.
 *
 * Without AVX-512 VNNI at compile time (-march=native on another CPU) eoc_encoder_vnni() says 0
 * and eoc runs its float32 numpy encoder instead; nothing here is then called.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef _OPENMP
#define ENC_PARALLEL_FOR _Pragma("omp parallel for num_threads(nth) schedule(static)")
#else
#define ENC_PARALLEL_FOR (void)nth;
#endif

/* One linear layer: packed int8 weights, per-column scales, per-column sums of the weights
 * (for the zero point), bias, and per-input smoothing factors (SmoothQuant's: a layer norm's
 * few large channels would take a row's 8 bits, so they are divided down here and their
 * weights multiplied up to match; encoder.py derives them); n outputs from k inputs. */
typedef struct {
    const int8_t *q;
    const float *scale;
    const int32_t *qsum;
    const float *bias;
    const float *smooth; /* NULL, or k factors each input is multiplied by before quantizing */
    int64_t n, k;
} eoc_i8_linear;

/* One post-norm encoder block: x = ln1(x + out(attention(qk(x), v(x)))),
 * x = ln2(x + down(gelu(up(x)))). The queries and keys are one product, the values another: the
 * values' input is smoothed, the queries' and keys' is not (encoder.py says why). */
typedef struct {
    eoc_i8_linear qk, v, out, up, down;
    const float *ln1_w, *ln1_b, *ln2_w, *ln2_b;
} eoc_enc_layer;

/* A linear layer's float32 weights w (n outputs x k inputs, row-major), each input j first
 * multiplied by mul[j] where mul is given, as int8 with one scale per output (symmetric, rounded
 * half to even: encoder.py's quantize_columns, element for element) in the packed layout above;
 * scale[n] and qsum[n] (the sum of each output's int8 weights) beside. n % 64 == 0, k % 4 == 0. */
void eoc_pack_i8(const float *w, const float *mul, int64_t n, int64_t k, int8_t *packed,
                 float *scale, int32_t *qsum, int nth) {
    ENC_PARALLEL_FOR
    for (int64_t r = 0; r < n; r++) {
        const float *row = w + r * k;
        float top = 0.0f;
        for (int64_t j = 0; j < k; j++) {
            const float v = fabsf(mul != NULL ? row[j] * mul[j] : row[j]);
            if (v > top) top = v;
        }
        const float sc = top > 0.0f ? top / 127.0f : 1.0f;
        int32_t sum = 0;
        int8_t *panel = packed + (r / 64) * (k / 4) * 256 + (r % 64) * 4;
        for (int64_t j = 0; j < k; j++) {
            float q = rintf((mul != NULL ? row[j] * mul[j] : row[j]) / sc);
            q = q > 127.0f ? 127.0f : (q < -127.0f ? -127.0f : q);
            panel[(j / 4) * 256 + j % 4] = (int8_t)q;
            sum += (int32_t)q;
        }
        scale[r] = sc, qsum[r] = sum;
    }
}

#if defined(__AVX512F__) && defined(__AVX512VNNI__) && defined(__AVX512BW__)
#include <immintrin.h>

int eoc_encoder_vnni(void) { return 1; }

#define MR 6 /* rows per micro-tile: 6 x 4 accumulators + 4 weights + 1 broadcast registers */
#define ROWPAD 16 /* the quantized rows are padded to a multiple of this (a tile's 16 rows) */

static inline __m512 smoothed(const float *x, const float *smooth, int64_t i) {
    const __m512 v = _mm512_loadu_ps(x + i);
    return smooth != NULL ? _mm512_mul_ps(v, _mm512_loadu_ps(smooth + i)) : v;
}

/* A row x (k floats, times smooth where given) to uint8 with a scale and zero point:
 * x ~ s * (a - z). */
static void quantize_row(const float *x, const float *smooth, int64_t k, uint8_t *a, float *s,
                         int32_t *z) {
    __m512 lo = _mm512_set1_ps(0.0f), hi = lo;
    for (int64_t i = 0; i < k; i += 16) {
        const __m512 v = smoothed(x, smooth, i);
        lo = _mm512_min_ps(lo, v), hi = _mm512_max_ps(hi, v);
    }
    const float mn = _mm512_reduce_min_ps(lo), mx = _mm512_reduce_max_ps(hi);
    const float scale = mx > mn ? (mx - mn) / 255.0f : 1.0f;
    const int32_t zero = (int32_t)lrintf(-mn / scale); /* mn <= 0 <= mx: zero in 0..255 */
    const __m512 inv = _mm512_set1_ps(1.0f / scale);
    const __m512i zv = _mm512_set1_epi32(zero);
    for (int64_t i = 0; i < k; i += 16) {
        __m512i v = _mm512_cvtps_epi32(_mm512_mul_ps(smoothed(x, smooth, i), inv));
        v = _mm512_add_epi32(v, zv);
        _mm_storeu_si128((__m128i *)(a + i), _mm512_cvtusepi32_epi8(_mm512_max_epi32(v, _mm512_setzero_si512())));
    }
    *s = scale, *z = zero;
}

/* Sixteen outputs of row m from their exact int32 sums: s_m * w_n * (sum - z_m * qsum_n) + bias_n,
 * for the columns col..col+15, into orow (row m of out). */
static inline void store16(const eoc_i8_linear *w, __m512i sum, float s, int32_t z, int64_t col,
                           float *orow) {
    const __m512i zs = _mm512_mullo_epi32(_mm512_set1_epi32(z), _mm512_loadu_si512(w->qsum + col));
    const __m512 dot = _mm512_cvtepi32_ps(_mm512_sub_epi32(sum, zs));
    const __m512 ws = _mm512_mul_ps(_mm512_set1_ps(s), _mm512_loadu_ps(w->scale + col));
    _mm512_storeu_ps(orow + col, _mm512_fmadd_ps(dot, ws, _mm512_loadu_ps(w->bias + col)));
}

/* out (rows x n) = x (rows x k) @ W + bias, through the uint8 rows aq (rows padded to a multiple
 * of MR with zeros, k bytes each), their scales and zero points. One task per 64-column panel. */
static void linear(const eoc_i8_linear *w, const uint8_t *aq, const float *as, const int32_t *az,
                   int64_t rows, float *out, int nth) {
    const int64_t k = w->k, n = w->n, panels = n / 64, groups = k / 4;
    ENC_PARALLEL_FOR
    for (int64_t p = 0; p < panels; p++) {
        const int8_t *wp = w->q + p * groups * 256;
        for (int64_t m0 = 0; m0 < rows; m0 += MR) {
            __m512i acc[MR][4];
#pragma GCC unroll 6
            for (int r = 0; r < MR; r++)
#pragma GCC unroll 4
                for (int c = 0; c < 4; c++) acc[r][c] = _mm512_setzero_si512();
            const uint8_t *ar = aq + m0 * k;
            for (int64_t g = 0; g < groups; g++) {
                const int8_t *wg = wp + g * 256;
                const __m512i w0 = _mm512_loadu_si512(wg), w1 = _mm512_loadu_si512(wg + 64);
                const __m512i w2 = _mm512_loadu_si512(wg + 128), w3 = _mm512_loadu_si512(wg + 192);
#pragma GCC unroll 6
                for (int r = 0; r < MR; r++) {
                    int32_t four;
                    memcpy(&four, ar + r * k + g * 4, 4);
                    const __m512i a = _mm512_set1_epi32(four);
                    acc[r][0] = _mm512_dpbusd_epi32(acc[r][0], a, w0);
                    acc[r][1] = _mm512_dpbusd_epi32(acc[r][1], a, w1);
                    acc[r][2] = _mm512_dpbusd_epi32(acc[r][2], a, w2);
                    acc[r][3] = _mm512_dpbusd_epi32(acc[r][3], a, w3);
                }
            }
#pragma GCC unroll 6
            for (int r = 0; r < MR; r++) { /* unrolled, so acc stays in registers */
                const int64_t m = m0 + r;
                if (m >= rows) break;
#pragma GCC unroll 4
                for (int c = 0; c < 4; c++)
                    store16(w, acc[r][c], as[m], az[m], p * 64 + c * 16, out + m * n);
            }
        }
    }
}

#if defined(__AMX_TILE__) && defined(__AMX_INT8__) && defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#define ENC_AMX 1
#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18

/* Whether this process may use AMX's tiles: asked of Linux once (it grants them per process; a
 * kernel or hypervisor that does not is a 0, and the VNNI path runs). */
int eoc_encoder_amx(void) {
    static int granted = -1;
    if (granted < 0) granted = syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0;
    return granted;
}

typedef struct {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} __attribute__((packed)) tile_config;

/* Eight tiles of 16 rows x 64 bytes: 16 x 16 int32 sums, 16 rows x 64 uint8 inputs, or 16
 * groups of 4 inputs x 16 columns of int8 weights (linear_amx says which holds what). */
static void tiles_on(void) {
    tile_config c;
    memset(&c, 0, sizeof c);
    c.palette = 1;
    for (int i = 0; i < 8; i++) c.rows[i] = 16, c.colsb[i] = 64;
    _tile_loadconfig(&c);
}

/* Tiles 0-3, the sums, to zero (a macro: a tile's number must be a constant). */
#define ZERO_SUMS() \
    do {                \
        _tile_zero(0);  \
        _tile_zero(1);  \
        _tile_zero(2);  \
        _tile_zero(3);  \
    } while (0)

/* The sums of a stored block of tiles (height rows from row m0, cols x 16 columns from col0;
 * row stride ld int32s) into out, as far as the rows go. */
static void store_sums(const eoc_i8_linear *w, const int32_t *sums, int64_t ld, const float *as,
                       const int32_t *az, int64_t m0, int64_t height, int64_t rows, int64_t col0,
                       int cols, float *out) {
    for (int64_t r = 0; r < height && m0 + r < rows; r++)
        for (int c = 0; c < cols; c++)
            store16(w, _mm512_load_si512(sums + r * ld + c * 16), as[m0 + r], az[m0 + r],
                    col0 + c * 16, out + (m0 + r) * w->n);
}

/* linear() on tiles: one task per 64-column panel; 32 rows at a time as two row tiles times
 * two column tiles (each weight tile loaded once for both row tiles), a last 16 or fewer as
 * one row tile times four column tiles; 64 inputs a step (k % 64 == 0; aq padded to a multiple
 * of 16 rows). */
static void linear_amx(const eoc_i8_linear *w, const uint8_t *aq, const float *as,
                       const int32_t *az, int64_t rows, float *out, int nth) {
    const int64_t k = w->k, panels = w->n / 64, groups = k / 4;
#ifdef _OPENMP
#pragma omp parallel num_threads(nth)
#else
    (void)nth;
#endif
    {
        int32_t sums[32 * 64] __attribute__((aligned(64)));
        tiles_on();
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
        for (int64_t p = 0; p < panels; p++) {
            const int8_t *wp = w->q + p * groups * 256;
            int64_t m0 = 0;
            for (; rows - m0 > 16; m0 += 32) { /* two row tiles (4, 5) x two column tiles (6, 7) */
                const uint8_t *a0 = aq + m0 * k, *a1 = a0 + 16 * k;
                for (int half = 0; half < 2; half++) {
                    ZERO_SUMS();
                    for (int64_t j = 0; j < k; j += 64) {
                        const int8_t *wg = wp + (j / 4) * 256 + half * 128;
                        _tile_loadd(4, a0 + j, k);
                        _tile_loadd(6, wg, 256);
                        _tile_dpbusd(0, 4, 6);
                        _tile_loadd(5, a1 + j, k);
                        _tile_dpbusd(2, 5, 6);
                        _tile_loadd(7, wg + 64, 256);
                        _tile_dpbusd(1, 4, 7);
                        _tile_dpbusd(3, 5, 7);
                    }
                    _tile_stored(0, sums, 128);
                    _tile_stored(1, sums + 16, 128);
                    _tile_stored(2, sums + 16 * 32, 128);
                    _tile_stored(3, sums + 16 * 32 + 16, 128);
                    store_sums(w, sums, 32, as, az, m0, 32, rows, p * 64 + half * 32, 2, out);
                }
            }
            if (m0 < rows) { /* one row tile (4) x four column tiles, two weight tiles (5, 6) */
                ZERO_SUMS();
                for (int64_t j = 0; j < k; j += 64) {
                    const int8_t *wg = wp + (j / 4) * 256;
                    _tile_loadd(4, aq + m0 * k + j, k);
                    _tile_loadd(5, wg, 256);
                    _tile_loadd(6, wg + 64, 256);
                    _tile_dpbusd(0, 4, 5);
                    _tile_loadd(5, wg + 128, 256);
                    _tile_dpbusd(1, 4, 6);
                    _tile_loadd(6, wg + 192, 256);
                    _tile_dpbusd(2, 4, 5);
                    _tile_dpbusd(3, 4, 6);
                }
                _tile_stored(0, sums, 256);
                _tile_stored(1, sums + 16, 256);
                _tile_stored(2, sums + 32, 256);
                _tile_stored(3, sums + 48, 256);
                store_sums(w, sums, 64, as, az, m0, 16, rows, p * 64, 4, out);
            }
        }
        _tile_release();
    }
}
#else
int eoc_encoder_amx(void) { return 0; }
#endif

/* Quantize every row of x (rows x k) into aq, then out = linear(x), on tiles where amx says;
 * 1 when it ran on tiles, else 0. */
static int dense(const eoc_i8_linear *w, const float *x, int64_t rows, uint8_t *aq, float *as,
                 int32_t *az, float *out, int nth, int amx) {
    for (int64_t m = 0; m < rows; m++)
        quantize_row(x + m * w->k, w->smooth, w->k, aq + m * w->k, as + m, az + m);
#ifdef ENC_AMX
    if (amx && w->k % 64 == 0) {
        linear_amx(w, aq, as, az, rows, out, nth);
        return 1;
    }
#else
    (void)amx;
#endif
    linear(w, aq, as, az, rows, out, nth);
    return 0;
}

/* x[m] = layer_norm(x[m] + y[m]) * weight + bias, for rows of d floats (d % 16 == 0). */
static void add_norm(float *x, const float *y, const float *weight, const float *bias,
                     int64_t rows, int64_t d, float eps) {
    for (int64_t m = 0; m < rows; m++) {
        float *xr = x + m * d;
        __m512 sum = _mm512_setzero_ps();
        for (int64_t i = 0; i < d; i += 16) {
            __m512 v = _mm512_loadu_ps(xr + i);
            if (y != NULL) v = _mm512_add_ps(v, _mm512_loadu_ps(y + m * d + i));
            _mm512_storeu_ps(xr + i, v);
            sum = _mm512_add_ps(sum, v);
        }
        const __m512 mu = _mm512_set1_ps(_mm512_reduce_add_ps(sum) / (float)d);
        __m512 var = _mm512_setzero_ps();
        for (int64_t i = 0; i < d; i += 16) {
            const __m512 c = _mm512_sub_ps(_mm512_loadu_ps(xr + i), mu);
            var = _mm512_fmadd_ps(c, c, var);
        }
        const __m512 inv = _mm512_set1_ps(1.0f / sqrtf(_mm512_reduce_add_ps(var) / (float)d + eps));
        for (int64_t i = 0; i < d; i += 16) {
            const __m512 c = _mm512_mul_ps(_mm512_sub_ps(_mm512_loadu_ps(xr + i), mu), inv);
            _mm512_storeu_ps(xr + i, _mm512_fmadd_ps(c, _mm512_loadu_ps(weight + i),
                                                     _mm512_loadu_ps(bias + i)));
        }
    }
}

/* e^x for x <= 0 (below -87 it is 0 to float32's precision): 2^n * 2^f, f in [-1/2, 1/2],
 * 2^f by its Taylor series to f^7 (relative error under 2e-8 there). */
static inline __m512 exp_neg(__m512 x) {
    x = _mm512_max_ps(x, _mm512_set1_ps(-87.0f));
    const __m512 t = _mm512_mul_ps(x, _mm512_set1_ps(1.4426950408889634f));
    const __m512 n = _mm512_roundscale_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m512 f = _mm512_mul_ps(_mm512_sub_ps(t, n), _mm512_set1_ps(0.6931471805599453f));
    __m512 p = _mm512_set1_ps(1.0f / 5040.0f);
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f / 720.0f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f / 120.0f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f / 24.0f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f / 6.0f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(0.5f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f));
    return _mm512_scalef_ps(p, n);
}

/* BERT's GELU, x * (1 + erf(x / sqrt 2)) / 2, in place over n floats (n % 16 == 0); erf by
 * Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7), as the numpy encoder computes it. */
static void gelu(float *x, int64_t n) {
    const __m512 sign = _mm512_set1_ps(-0.0f), half = _mm512_set1_ps(0.5f), one = _mm512_set1_ps(1.0f);
    for (int64_t i = 0; i < n; i += 16) {
        const __m512 v = _mm512_loadu_ps(x + i);
        const __m512 u = _mm512_mul_ps(v, _mm512_set1_ps(0.7071067811865476f));
        const __m512 a = _mm512_andnot_ps(sign, u);
        const __m512 t = _mm512_div_ps(one, _mm512_fmadd_ps(a, _mm512_set1_ps(0.3275911f), one));
        __m512 p = _mm512_set1_ps(1.061405429f);
        p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-1.453152027f));
        p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(1.421413741f));
        p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-0.284496736f));
        p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(0.254829592f));
        p = _mm512_mul_ps(p, t);
        const __m512 e = _mm512_fnmadd_ps(p, exp_neg(_mm512_mul_ps(_mm512_sub_ps(_mm512_setzero_ps(), a), a)), one);
        const __m512 erf = _mm512_or_ps(e, _mm512_and_ps(sign, u)); /* erf is odd */
        _mm512_storeu_ps(x + i, _mm512_mul_ps(_mm512_mul_ps(half, v), _mm512_add_ps(one, erf)));
    }
}

/* Self-attention over t tokens: qk rows hold [q | k] (2d floats), v rows d floats, ctx gets
 * t x d; heads of hd floats (hd % 16 == 0), scores scaled by 1 / sqrt(hd), softmax over all t
 * (one text: no padding). Each head's keys are laid out transposed first (kt: hd rows of tp
 * floats, tp = t rounded up to 16, zeros past t), so 16 scores are one vector of FMAs, not 16
 * sums across a vector. scores holds tp floats. */
static void attention(const float *qk, const float *v, int64_t t, int64_t d, int64_t heads,
                      float *ctx, float *scores, float *kt) {
    const int64_t hd = d / heads, w = 2 * d, tp = (t + 15) / 16 * 16;
    const __m512 scale = _mm512_set1_ps(1.0f / sqrtf((float)hd));
    for (int64_t h = 0; h < heads; h++) {
        for (int64_t e = 0; e < hd; e++)
            for (int64_t j = 0; j < tp; j++) kt[e * tp + j] = j < t ? qk[j * w + d + h * hd + e] : 0.0f;
        for (int64_t i = 0; i < t; i++) {
            const float *q = qk + i * w + h * hd;
            __m512 top = _mm512_set1_ps(-INFINITY);
            for (int64_t jb = 0; jb < tp; jb += 16) {
                __m512 acc = _mm512_setzero_ps();
                for (int64_t e = 0; e < hd; e++)
                    acc = _mm512_fmadd_ps(_mm512_set1_ps(q[e]), _mm512_loadu_ps(kt + e * tp + jb), acc);
                acc = _mm512_mul_ps(acc, scale);
                _mm512_storeu_ps(scores + jb, acc);
                const __mmask16 real = t - jb >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (t - jb)) - 1u);
                top = _mm512_mask_max_ps(top, real, top, acc);
            }
            const __m512 mx = _mm512_set1_ps(_mm512_reduce_max_ps(top));
            __m512 sum = _mm512_setzero_ps();
            for (int64_t jb = 0; jb < tp; jb += 16) {
                const __mmask16 real = t - jb >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (t - jb)) - 1u);
                const __m512 p = _mm512_maskz_mov_ps(real, exp_neg(_mm512_sub_ps(_mm512_loadu_ps(scores + jb), mx)));
                _mm512_storeu_ps(scores + jb, p);
                sum = _mm512_add_ps(sum, p);
            }
            const __m512 inv = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(sum));
            float *o = ctx + i * d + h * hd;
            for (int64_t e = 0; e < hd; e += 16) {
                __m512 acc = _mm512_setzero_ps();
                for (int64_t j = 0; j < t; j++)
                    acc = _mm512_fmadd_ps(_mm512_set1_ps(scores[j]),
                                          _mm512_loadu_ps(v + j * d + h * hd + e), acc);
                _mm512_storeu_ps(o + e, _mm512_mul_ps(acc, inv));
            }
        }
    }
}

/* One text's unit sentence vector (d floats into out) from its t token ids: word + position +
 * token type 0 embeddings, layer norm, the blocks, the mean over tokens, L2 norm.
 * scratch: t * (5d + ff) + tp * (1 + d / heads) floats (tp = t rounded up to 16), and t + ROWPAD
 * rows of max(d, ff) bytes and t + ROWPAD scales and zero points (encoder.py sizes them). amx:
 * the products on tiles (only where eoc_encoder_amx() said 1; the vector is the same). Returns
 * how many of the products ran on tiles. */
int eoc_encode(const eoc_enc_layer *layers, int64_t n_layers, const int64_t *ids, int64_t t,
                const float *word, const float *pos, const float *type0, const float *emb_w,
                const float *emb_b, int64_t d, int64_t heads, int64_t ff, float eps,
                float *scratch, uint8_t *aq, float *as, int32_t *az, float *out, int nth, int amx) {
    float *x = scratch, *qk = x + t * d, *v = qk + 2 * t * d, *ctx = v + t * d, *mid = ctx + t * d;
    float *scores = mid + t * ff, *kt = scores + (t + 15) / 16 * 16;
    for (int64_t m = 0; m < t; m++)
        for (int64_t i = 0; i < d; i++)
            x[m * d + i] = word[ids[m] * d + i] + pos[m * d + i] + type0[i];
    add_norm(x, NULL, emb_w, emb_b, t, d, eps);
    const int64_t wide = ff > d ? ff : d;
    int tiled = 0;
    /* the rows past t pad the last micro-tile or tile: their products are never stored (each
     * output row reads its own input row only), so any bytes do; zeroed so none is undefined */
    memset(aq, 0, (size_t)((t + ROWPAD) * wide));
    for (int64_t l = 0; l < n_layers; l++) {
        const eoc_enc_layer *ly = &layers[l];
        tiled += dense(&ly->qk, x, t, aq, as, az, qk, nth, amx);
        tiled += dense(&ly->v, x, t, aq, as, az, v, nth, amx);
        attention(qk, v, t, d, heads, ctx, scores, kt);
        tiled += dense(&ly->out, ctx, t, aq, as, az, qk, nth, amx); /* qk's room reused for the product */
        add_norm(x, qk, ly->ln1_w, ly->ln1_b, t, d, eps);
        tiled += dense(&ly->up, x, t, aq, as, az, mid, nth, amx);
        gelu(mid, t * ff);
        tiled += dense(&ly->down, mid, t, aq, as, az, qk, nth, amx);
        add_norm(x, qk, ly->ln2_w, ly->ln2_b, t, d, eps);
    }
    double norm = 0.0;
    for (int64_t i = 0; i < d; i++) {
        float s = 0.0f;
        for (int64_t m = 0; m < t; m++) s += x[m * d + i];
        out[i] = s / (float)t;
        norm += (double)out[i] * out[i];
    }
    const float inv = norm > 0.0 ? (float)(1.0 / sqrt(norm)) : 0.0f;
    for (int64_t i = 0; i < d; i++) out[i] *= inv;
    return tiled;
}

#else

int eoc_encoder_vnni(void) { return 0; }
int eoc_encoder_amx(void) { return 0; }

int eoc_encode(const eoc_enc_layer *layers, int64_t n_layers, const int64_t *ids, int64_t t,
                const float *word, const float *pos, const float *type0, const float *emb_w,
                const float *emb_b, int64_t d, int64_t heads, int64_t ff, float eps,
                float *scratch, uint8_t *aq, float *as, int32_t *az, float *out, int nth, int amx) {
    (void)layers, (void)n_layers, (void)ids, (void)t, (void)word, (void)pos, (void)type0;
    (void)emb_w, (void)emb_b, (void)d, (void)heads, (void)ff, (void)eps, (void)scratch;
    (void)aq, (void)as, (void)az, (void)out, (void)nth, (void)amx; /* never called: eoc_encoder_vnni() == 0 */
    return 0;
}

#endif
