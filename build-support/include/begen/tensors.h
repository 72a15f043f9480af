// begen support headers: a variable number of tensors.
//
// A kernel that takes `const BE::Tensors xs` gets every array of a Python
// list or tuple as one input each; one that takes `BE::Tensors outs` gets
// as many outputs as its call asks for (`out=` lists them):
//
//     void add_all(const BE::Tensors xs, BE::Tensor out) {
//         float* o = out.data_ptr<float>();
//         for (const BE::Tensor x : xs) { ... }
//         if (xs.size() > 0) { const BE::Tensor first = xs[0]; ... }
//     }
//
// Each element is a BE::Tensor view of its own rank and element type, made
// when it is read. Indexing past the end throws std::out_of_range, so a
// kernel never reads a buffer its call did not pass. Plain C++17; no XLA
// or CUDA header: the glue hands the buffers over as abi.h's TensorList.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "begen/abi.h"
#include "brainevent/tensor.h"

namespace begen {

/// The BE::DType of an XLA element type code the glue let through.
BEGEN_HIDDEN inline BE::DType dtype_of(int32_t code) noexcept {
    switch (code) {
    case xla_type::kPred: return BE::DType::Bool;
    case xla_type::kS8: return BE::DType::Int8;
    case xla_type::kS16: return BE::DType::Int16;
    case xla_type::kS32: return BE::DType::Int32;
    case xla_type::kS64: return BE::DType::Int64;
    case xla_type::kU8: return BE::DType::UInt8;
    case xla_type::kU16: return BE::DType::UInt16;
    case xla_type::kU32: return BE::DType::UInt32;
    case xla_type::kU64: return BE::DType::UInt64;
    case xla_type::kF16: return BE::DType::Float16;
    case xla_type::kBF16: return BE::DType::BFloat16;
    case xla_type::kF32: return BE::DType::Float32;
    case xla_type::kF64: return BE::DType::Float64;
    case xla_type::kC64: return BE::DType::Complex64;
    case xla_type::kC128: return BE::DType::Complex128;
    default: return BE::DType::Invalid;
    }
}

/// The view of one buffer as the glue handed it over (the extents are
/// copied into the view).
BEGEN_HIDDEN inline BE::Tensor view_of(const TensorArg& t) {
    return BE::Tensor(t.data, t.dims, static_cast<int>(t.ndim), dtype_of(t.dtype));
}

}  // namespace begen

namespace BE {

/// The tensors of a variadic input or output list (a view, valid during
/// the call).
class Tensors {
public:
    explicit Tensors(const ::begen::TensorList& l) noexcept : l_(l) {}

    /// How many tensors the call passed.
    size_t size() const noexcept { return static_cast<size_t>(l_.size); }

    /// Whether the call passed none.
    bool empty() const noexcept { return l_.size == 0; }

    /// The view of tensor `i`; an index past the end throws
    /// std::out_of_range.
    Tensor operator[](size_t i) const {
        if (i >= size()) {
            throw std::out_of_range("BE::Tensors: index " + std::to_string(i) + " is past the end of a list of " +
                                    std::to_string(size()) + " tensors");
        }
        return ::begen::view_of(l_.items[i]);
    }

    /// Same as `operator[]`.
    Tensor at(size_t i) const { return (*this)[i]; }

    /// Iterates over the views in order: `for (const BE::Tensor x : xs)`.
    class iterator {
    public:
        explicit iterator(const ::begen::TensorArg* p) noexcept : p_(p) {}
        Tensor operator*() const { return ::begen::view_of(*p_); }
        iterator& operator++() noexcept {
            ++p_;
            return *this;
        }
        bool operator==(const iterator& o) const noexcept { return p_ == o.p_; }
        bool operator!=(const iterator& o) const noexcept { return p_ != o.p_; }

    private:
        const ::begen::TensorArg* p_;
    };
    iterator begin() const noexcept { return iterator(l_.items); }
    iterator end() const noexcept { return iterator(l_.items + l_.size); }

private:
    ::begen::TensorList l_;
};

}  // namespace BE
