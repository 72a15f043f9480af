// CPU kernels of tests/e2e/transformer.
#include <cmath>
#include <cstdint>

// y = x * rstd per row, rstd = 1 / sqrt(mean(x^2) + eps): the backward
// kernel reads the saved rstd (`residuals: [rstd]`).
// @BE rmsnorm arg:float32[n,d] ret:float32[n,d] ret:float32[n] attr.eps=1e-5 dim.n dim.d
void rmsnorm(const float* x, float* y, float* rstd, float eps, int64_t n, int64_t d) {
    for (int64_t i = 0; i < n; ++i) {
        float ss = 0.0f;
        for (int64_t j = 0; j < d; ++j) ss += x[i * d + j] * x[i * d + j];
        rstd[i] = 1.0f / std::sqrt(ss / static_cast<float>(d) + eps);
        for (int64_t j = 0; j < d; ++j) y[i * d + j] = x[i * d + j] * rstd[i];
    }
}

// @BE rmsnorm_bwd arg:float32[n,d] arg:float32[n] arg:float32[n,d] ret:float32[n,d] dim.n dim.d
void rmsnorm_bwd(const float* x, const float* rstd, const float* ct_y, float* ct_x, int64_t n, int64_t d) {
    for (int64_t i = 0; i < n; ++i) {
        const float r = rstd[i];
        float dot = 0.0f;
        for (int64_t j = 0; j < d; ++j) dot += ct_y[i * d + j] * x[i * d + j];
        for (int64_t j = 0; j < d; ++j)
            ct_x[i * d + j] = r * ct_y[i * d + j] - r * r * r / static_cast<float>(d) * x[i * d + j] * dot;
    }
}

// y = x^3 elementwise.
// @BE cube arg:float32[b,s,d] ret:float32[b,s,d] dim.b dim.s dim.d
void cube(const float* x, float* y, int64_t b, int64_t s, int64_t d) {
    for (int64_t i = 0; i < b * s * d; ++i) y[i] = x[i] * x[i] * x[i];
}

// @BE cube_bwd arg:float32[b,s,d] arg:float32[b,s,d] ret:float32[b,s,d] dim.b dim.s dim.d
void cube_bwd(const float* x, const float* ct_y, float* ct_x, int64_t b, int64_t s, int64_t d) {
    for (int64_t i = 0; i < b * s * d; ++i) ct_x[i] = 3.0f * x[i] * x[i] * ct_y[i];
}

// loss[i] = logsumexp(logits[i]) - logits[i, labels[i]].
// @BE xent arg:float32[b,c] arg:int32[b] ret:float32[b] dim.b dim.c
void xent(const float* logits, const int32_t* labels, float* loss, int64_t b, int64_t c) {
    for (int64_t i = 0; i < b; ++i) {
        float mx = logits[i * c];
        for (int64_t j = 1; j < c; ++j) mx = std::fmax(mx, logits[i * c + j]);
        float sum = 0.0f;
        for (int64_t j = 0; j < c; ++j) sum += std::exp(logits[i * c + j] - mx);
        loss[i] = std::log(sum) + mx - logits[i * c + labels[i]];
    }
}

// The cotangent of the logits only: the labels are integers.
// @BE xent_bwd arg:float32[b,c] arg:int32[b] arg:float32[b] ret:float32[b,c] dim.b dim.c
void xent_bwd(const float* logits, const int32_t* labels, const float* ct, float* ct_logits, int64_t b, int64_t c) {
    for (int64_t i = 0; i < b; ++i) {
        float mx = logits[i * c];
        for (int64_t j = 1; j < c; ++j) mx = std::fmax(mx, logits[i * c + j]);
        float sum = 0.0f;
        for (int64_t j = 0; j < c; ++j) sum += std::exp(logits[i * c + j] - mx);
        for (int64_t j = 0; j < c; ++j) {
            const float p = std::exp(logits[i * c + j] - mx) / sum;
            ct_logits[i * c + j] = ct[i] * (p - (j == labels[i] ? 1.0f : 0.0f));
        }
    }
}

// y = x w^T, tiled by TILE over the rows of x (every tile gives the same
// numbers: the sums run in one order).
// @BE matmul_tb arg:float32[m,k] arg:float32[n,k] ret:float32[m,n] dim.m dim.k dim.n const.TILE=8,16,32,64
template <int TILE>
void matmul_tb(const float* x, const float* w, float* y, int64_t m, int64_t k, int64_t n) {
    for (int64_t i0 = 0; i0 < m; i0 += TILE)
        for (int64_t i = i0; i < m && i < i0 + TILE; ++i)
            for (int64_t j = 0; j < n; ++j) {
                float acc = 0.0f;
                for (int64_t l = 0; l < k; ++l) acc += x[i * k + l] * w[j * k + l];
                y[i * n + j] = acc;
            }
}

// The transpose in x: ct_x = ct w.
// @BE matmul_tb_tx arg:float32[n,k] arg:float32[m,n] ret:float32[m,k] dim.m dim.k dim.n const.TILE=8,16,32,64
template <int TILE>
void matmul_tb_tx(const float* w, const float* ct, float* ct_x, int64_t m, int64_t k, int64_t n) {
    for (int64_t i0 = 0; i0 < m; i0 += TILE)
        for (int64_t i = i0; i < m && i < i0 + TILE; ++i)
            for (int64_t l = 0; l < k; ++l) {
                float acc = 0.0f;
                for (int64_t j = 0; j < n; ++j) acc += ct[i * n + j] * w[j * k + l];
                ct_x[i * k + l] = acc;
            }
}

// The same pair, each tuned on its own (begen.yaml's `tune:` names both).
// @BE matmul_tt arg:float32[m,k] arg:float32[n,k] ret:float32[m,n] dim.m dim.k dim.n const.TILE=8,16,32,64
template <int TILE>
void matmul_tt(const float* x, const float* w, float* y, int64_t m, int64_t k, int64_t n) {
    matmul_tb<TILE>(x, w, y, m, k, n);
}

// @BE matmul_tt_tx arg:float32[n,k] arg:float32[m,n] ret:float32[m,k] dim.m dim.k dim.n const.TILE=8,16,32,64
template <int TILE>
void matmul_tt_tx(const float* w, const float* ct, float* ct_x, int64_t m, int64_t k, int64_t n) {
    matmul_tb_tx<TILE>(w, ct, ct_x, m, k, n);
}

// y = x w^T again, differentiated by a backward kernel (`vjp:`, a
// jax.custom_vjp) instead of a transpose: matmul_vb's backward is not tuned,
// matmul_vt's is (begen.yaml's `tune:` names it).
// @BE matmul_vb arg:float32[m,k] arg:float32[n,k] ret:float32[m,n] dim.m dim.k dim.n const.TILE=8,16,32,64
template <int TILE>
void matmul_vb(const float* x, const float* w, float* y, int64_t m, int64_t k, int64_t n) {
    matmul_tb<TILE>(x, w, y, m, k, n);
}

// ct_x = ct w, ct_w = ct^T x.
// @BE matmul_vb_bwd arg:float32[m,k] arg:float32[n,k] arg:float32[m,n] ret:float32[m,k] ret:float32[n,k] dim.m dim.k dim.n const.TILE=8,16,32,64
template <int TILE>
void matmul_vb_bwd(const float* x, const float* w, const float* ct, float* ct_x, float* ct_w, int64_t m, int64_t k,
                   int64_t n) {
    matmul_tb_tx<TILE>(w, ct, ct_x, m, k, n);
    for (int64_t j = 0; j < n; ++j)
        for (int64_t l = 0; l < k; ++l) {
            float acc = 0.0f;
            for (int64_t i = 0; i < m; ++i) acc += ct[i * n + j] * x[i * k + l];
            ct_w[j * k + l] = acc;
        }
}

// @BE matmul_vt arg:float32[m,k] arg:float32[n,k] ret:float32[m,n] dim.m dim.k dim.n const.TILE=8,16,32,64
template <int TILE>
void matmul_vt(const float* x, const float* w, float* y, int64_t m, int64_t k, int64_t n) {
    matmul_tb<TILE>(x, w, y, m, k, n);
}

// @BE matmul_vt_bwd arg:float32[m,k] arg:float32[n,k] arg:float32[m,n] ret:float32[m,k] ret:float32[n,k] dim.m dim.k dim.n const.TILE=8,16,32,64
template <int TILE>
void matmul_vt_bwd(const float* x, const float* w, const float* ct, float* ct_x, float* ct_w, int64_t m, int64_t k,
                   int64_t n) {
    matmul_vb_bwd<TILE>(x, w, ct, ct_x, ct_w, m, k, n);
}
