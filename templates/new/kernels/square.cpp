// {{package}}'s CPU kernels. `// @BE` exports a function to JAX: `arg` is an
// input, `ret` an output, `attr.scale` a keyword argument, `dim.n` the
// length begen passes from the arrays' shapes.
#include <cstdint>

// y = scale * x^2
// @BE square arg:float64[n] ret:float64[n] attr.scale:float64 dim.n
void square(const double* x, double* y, double scale, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = scale * x[i] * x[i];
}

// Its backward kernel (begen.yaml pairs them): the forward's inputs, then
// the output's cotangent dy; returns the input's cotangent dx.
// @BE square_bwd arg:float64[n] arg:float64[n] ret:float64[n] attr.scale:float64 dim.n
void square_bwd(const double* x, const double* dy, double* dx, double scale, int64_t n) {
    for (int64_t i = 0; i < n; ++i) dx[i] = 2.0 * scale * x[i] * dy[i];
}
