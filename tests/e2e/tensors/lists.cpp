// Kernels in begen's own vocabulary that take a variable number of inputs
// or outputs (`const BE::Tensors`, `BE::Tensors`):
// tests/python/test_e2e_tensors.py.
#include <cstdint>
#include <cstring>

#include "brainevent/common.h"

// The sum of any number of float32 arrays of out's size.
// @BE sum_all
void sum_all(const BE::Tensors xs, BE::Tensor out) {
    float* o = out.data_ptr<float>();
    for (int64_t i = 0; i < out.numel(); ++i) o[i] = 0.0f;
    for (const BE::Tensor x : xs) {
        BE_CHECK_ARG(x.dtype() == BE::DType::Float32 && x.numel() == out.numel()) << "every input is float32 of the output's size";
        const float* in = x.data_ptr<const float>();
        for (int64_t i = 0; i < out.numel(); ++i) o[i] += in[i];
    }
}

// The list declared before a fixed input and an attribute:
// scale * (first + every one of rest).
// @BE scaled_sum
void scaled_sum(const BE::Tensors& rest, const BE::Tensor first, BE::Tensor out, float scale) {
    const float* f = first.data_ptr<const float>();
    float* o = out.data_ptr<float>();
    for (int64_t i = 0; i < first.numel(); ++i) o[i] = f[i];
    for (size_t k = 0; k < rest.size(); ++k) {
        const float* in = rest[k].data_ptr<const float>();
        for (int64_t i = 0; i < first.numel(); ++i) o[i] += in[i];
    }
    for (int64_t i = 0; i < first.numel(); ++i) o[i] *= scale;
}

// Any number of outputs, before a fixed one: the k-th is x * (k + 1), and
// `count` their number.
// @BE copies
void copies(const BE::Tensor x, BE::Tensors ys, BE::Tensor count) {
    count.data_ptr<int32_t>()[0] = static_cast<int32_t>(ys.size());
    const float* in = x.data_ptr<const float>();
    for (size_t k = 0; k < ys.size(); ++k) {
        const BE::Tensor y = ys[k];
        BE_CHECK_ARG(y.numel() == x.numel()) << "every output is x's size";
        float* o = y.data_ptr<float>();
        for (int64_t i = 0; i < x.numel(); ++i) o[i] = in[i] * static_cast<float>(k + 1);
    }
}

// Each input's rank, element type and byte size, whatever they are: three
// int64 per input.
// @BE describe
void describe(const BE::Tensors xs, BE::Tensor out) {
    int64_t* o = out.data_ptr<int64_t>();
    BE_CHECK_ARG(out.numel() == 3 * static_cast<int64_t>(xs.size())) << "out holds three numbers per input";
    for (size_t k = 0; k < xs.size(); ++k) {
        o[3 * k] = xs[k].ndim();
        o[3 * k + 1] = static_cast<int64_t>(xs[k].dtype());
        o[3 * k + 2] = xs[k].nbytes();
    }
}

// Reads element `at` of the list, which may be past its end.
// @BE pick
void pick(const BE::Tensors xs, BE::Tensor out, int64_t at) {
    const BE::Tensor x = xs[static_cast<size_t>(at)];
    std::memcpy(out.data_ptr(), x.data_ptr(), static_cast<size_t>(out.nbytes()));
}

// Explicit tokens over lists: `arg` and `ret` alone.
// @BE twice arg ret
void twice(const BE::Tensors xs, BE::Tensors ys) {
    BE_CHECK_ARG(xs.size() == ys.size()) << "one output per input";
    for (size_t k = 0; k < xs.size(); ++k) {
        const float* in = xs[k].data_ptr<const float>();
        float* o = ys[k].data_ptr<float>();
        for (int64_t i = 0; i < xs[k].numel(); ++i) o[i] = 2.0f * in[i];
    }
}

// One output per input, each shaped and typed like it (no `out=`): -x.
// @BE neg_each arg ret:like(xs)
void neg_each(const BE::Tensors xs, BE::Tensors ys) {
    for (size_t k = 0; k < xs.size(); ++k) {
        BE_CHECK_ARG(xs[k].dtype() == BE::DType::Float32) << "neg_each takes float32 arrays";
        const float* in = xs[k].data_ptr<const float>();
        float* o = ys[k].data_ptr<float>();
        for (int64_t i = 0; i < xs[k].numel(); ++i) o[i] = -in[i];
    }
}

// Typed pointers beside a list: y = w * (sum of xs), every x of w's size.
// @BE weighted_sum arg:float32[n] arg ret:float32[n] dim.n
void weighted_sum(const float* w, const BE::Tensors xs, float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = 0.0f;
    for (const BE::Tensor x : xs) {
        BE_CHECK_ARG(x.dtype() == BE::DType::Float32 && x.numel() == n) << "every input is float32 of w's size";
        for (int64_t i = 0; i < n; ++i) y[i] += x.data_ptr<const float>()[i];
    }
    for (int64_t i = 0; i < n; ++i) y[i] *= w[i];
}

// Writes only the first element of each output: begen.yaml's
// `zero_outputs` zeroes the rest before the kernel runs.
// @BE first_only arg ret:like(xs)
void first_only(const BE::Tensors xs, BE::Tensors ys) {
    for (size_t k = 0; k < ys.size(); ++k) {
        if (ys[k].numel() > 0) ys[k].data_ptr<float>()[0] = xs[k].data_ptr<const float>()[0];
    }
}

// A template beside a list of inputs: its instance comes from `a`'s dtype.
// @BE template_sum arg:T[n] arg ret:T[n] dim.n const.T=float32,float64
template <typename T>
void template_sum(const T* a, const BE::Tensors xs, T* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = a[i];
    for (const BE::Tensor x : xs) {
        BE_CHECK_ARG(x.numel() == n && x.element_size() == static_cast<int64_t>(sizeof(T)))
            << "every input is of a's size and dtype";
        for (int64_t i = 0; i < n; ++i) y[i] += x.data_ptr<const T>()[i];
    }
}
