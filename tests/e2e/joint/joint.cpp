// Kernels linear in a group of inputs together (see begen.yaml).
#include <cmath>
#include <cstdint>

// y = sin(x) * dt + x * dc: linear in (dt, dc) jointly; with dc
// fixed and nonzero, not linear in dt alone.
// @BE gp arg:float64[n] arg:float64[n] arg:float64[n] ret:float64[n] dim.n
void gp(const double* x, const double* dt, const double* dc, double* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = std::sin(x[i]) * dt[i] + x[i] * dc[i];
}

// The transpose of gp in (dt, dc): one cotangent per input of the group.
// @BE gp_t arg:float64[n] arg:float64[n] ret:float64[n] ret:float64[n] dim.n
void gp_t(const double* x, const double* ct, double* gdt, double* gdc, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        gdt[i] = std::sin(x[i]) * ct[i];
        gdc[i] = x[i] * ct[i];
    }
}

// y = w * (dt + 2 dc) scaled by `s`: linear in w alone, and in (dt, dc) together.
// @BE wgp arg:float64[n] arg:float64[n] arg:float64[n] ret:float64[n] dim.n attr.s:float64
void wgp(const double* w, const double* dt, const double* dc, double* y, int64_t n, double s) {
    for (int64_t i = 0; i < n; ++i) y[i] = s * w[i] * (dt[i] + 2.0 * dc[i]);
}

// @BE wgp_tw arg:float64[n] arg:float64[n] arg:float64[n] ret:float64[n] dim.n attr.s:float64
void wgp_tw(const double* dt, const double* dc, const double* ct, double* gw, int64_t n, double s) {
    for (int64_t i = 0; i < n; ++i) gw[i] = s * ct[i] * (dt[i] + 2.0 * dc[i]);
}

// @BE wgp_t arg:float64[n] arg:float64[n] ret:float64[n] ret:float64[n] dim.n attr.s:float64
void wgp_t(const double* w, const double* ct, double* gdt, double* gdc, int64_t n, double s) {
    for (int64_t i = 0; i < n; ++i) {
        gdt[i] = s * w[i] * ct[i];
        gdc[i] = 2.0 * s * w[i] * ct[i];
    }
}

// z = exp(x) * y: linear in y, nonlinear in x.
// @BE escale arg:float64[n] arg:float64[n] ret:float64[n] dim.n attr.s:float64
void escale(const double* x, const double* y, double* z, int64_t n, double s) {
    for (int64_t i = 0; i < n; ++i) z[i] = s * std::exp(x[i]) * y[i];
}

// @BE escale_ty arg:float64[n] arg:float64[n] ret:float64[n] dim.n attr.s:float64
void escale_ty(const double* x, const double* ct, double* gy, int64_t n, double s) {
    for (int64_t i = 0; i < n; ++i) gy[i] = s * std::exp(x[i]) * ct[i];
}

// The backward kernel: the cotangents of x and y.
// @BE escale_bwd arg:float64[n] arg:float64[n] arg:float64[n] ret:float64[n] ret:float64[n] dim.n attr.s:float64
void escale_bwd(const double* x, const double* y, const double* ct, double* gx, double* gy, int64_t n, double s) {
    for (int64_t i = 0; i < n; ++i) {
        gx[i] = s * std::exp(x[i]) * y[i] * ct[i];
        gy[i] = s * std::exp(x[i]) * ct[i];
    }
}

// z = x^2 * y, its backward kernel the one derivative kernel.
// @BE escale2 arg:float64[n] arg:float64[n] ret:float64[n] dim.n
void escale2(const double* x, const double* y, double* z, int64_t n) {
    for (int64_t i = 0; i < n; ++i) z[i] = x[i] * x[i] * y[i];
}

// @BE escale2_bwd arg:float64[n] arg:float64[n] arg:float64[n] ret:float64[n] ret:float64[n] dim.n
void escale2_bwd(const double* x, const double* y, const double* ct, double* gx, double* gy, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        gx[i] = 2.0 * x[i] * y[i] * ct[i];
        gy[i] = x[i] * x[i] * ct[i];
    }
}

// gp again, with a backward kernel for every input.
// @BE gpx arg:float64[n] arg:float64[n] arg:float64[n] ret:float64[n] dim.n
void gpx(const double* x, const double* dt, const double* dc, double* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = std::sin(x[i]) * dt[i] + x[i] * dc[i];
}

// @BE gpx_bwd arg:float64[n] arg:float64[n] arg:float64[n] arg:float64[n] ret:float64[n] ret:float64[n] ret:float64[n] dim.n
void gpx_bwd(const double* x, const double* dt, const double* dc, const double* ct, double* gx, double* gdt,
             double* gdc, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        gx[i] = (std::cos(x[i]) * dt[i] + dc[i]) * ct[i];
        gdt[i] = std::sin(x[i]) * ct[i];
        gdc[i] = x[i] * ct[i];
    }
}

// y = x^2 a + sin(b), differentiated through a tangent kernel linear in its
// three tangents together (one transpose kernel for the group): a gradient
// with respect to any subset of x, a, b runs the tangent kernel with zeros
// for the others.
// @BE poly arg:float64[n] arg:float64[n] arg:float64[n] ret:float64[n] dim.n
void poly(const double* x, const double* a, const double* b, double* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] * x[i] * a[i] + std::sin(b[i]);
}

// @BE poly_jvp arg:float64[n] arg:float64[n] arg:float64[n] arg:float64[n] arg:float64[n] arg:float64[n] ret:float64[n] dim.n
void poly_jvp(const double* x, const double* a, const double* b, const double* dx, const double* da, const double* db,
              double* dy, int64_t n) {
    for (int64_t i = 0; i < n; ++i) dy[i] = 2.0 * x[i] * a[i] * dx[i] + x[i] * x[i] * da[i] + std::cos(b[i]) * db[i];
}

// @BE poly_jvp_t arg:float64[n] arg:float64[n] arg:float64[n] arg:float64[n] ret:float64[n] ret:float64[n] ret:float64[n] dim.n
void poly_jvp_t(const double* x, const double* a, const double* b, const double* ct, double* dx, double* da,
                double* db, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        dx[i] = 2.0 * x[i] * a[i] * ct[i];
        da[i] = x[i] * x[i] * ct[i];
        db[i] = std::cos(b[i]) * ct[i];
    }
}
