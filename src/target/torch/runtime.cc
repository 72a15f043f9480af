#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/tensor.h>
#include <torch/headeronly/core/ScalarType.h>

#include "begen/abi.h"

// The current CUDA stream of a device (torch's C shim, in libtorch_cuda):
// weak, so a library loads into a torch without CUDA, where only its CUDA
// ops, which no CPU tensor reaches, would need it.
extern "C" __attribute__((weak)) int32_t aoti_torch_get_current_cuda_stream(int32_t device_index, void** ret_stream);

namespace begen::torch_rt {
namespace {

using torch::headeronly::ScalarType;
using torch::stable::Tensor;

enum class Device { kCpu, kCuda };

// Every check throws std::runtime_error: the stable ABI hands its message to
// Python as a RuntimeError.
[[noreturn]] void fail(const char* function, const std::string& what) {
    throw std::runtime_error(std::string(function) + ": " + what);
}

const char* dtype_name(ScalarType t) {
    switch (t) {
        case ScalarType::Bool: return "bool";
        case ScalarType::Char: return "int8";
        case ScalarType::Byte: return "uint8";
        case ScalarType::Short: return "int16";
        case ScalarType::UInt16: return "uint16";
        case ScalarType::Int: return "int32";
        case ScalarType::UInt32: return "uint32";
        case ScalarType::Long: return "int64";
        case ScalarType::UInt64: return "uint64";
        case ScalarType::Float: return "float32";
        case ScalarType::Double: return "float64";
        case ScalarType::ComplexFloat: return "complex64";
        case ScalarType::ComplexDouble: return "complex128";
        case ScalarType::Half: return "float16";
        case ScalarType::BFloat16: return "bfloat16";
        default: return "a dtype begen kernels do not take";
    }
}

// begen's element type code (begen/abi.h) of a dtype begen kernels take.
int32_t xla_code(ScalarType t) {
    switch (t) {
        case ScalarType::Bool: return begen::xla_type::kPred;
        case ScalarType::Char: return begen::xla_type::kS8;
        case ScalarType::Byte: return begen::xla_type::kU8;
        case ScalarType::Short: return begen::xla_type::kS16;
        case ScalarType::UInt16: return begen::xla_type::kU16;
        case ScalarType::Int: return begen::xla_type::kS32;
        case ScalarType::UInt32: return begen::xla_type::kU32;
        case ScalarType::Long: return begen::xla_type::kS64;
        case ScalarType::UInt64: return begen::xla_type::kU64;
        case ScalarType::Float: return begen::xla_type::kF32;
        case ScalarType::Double: return begen::xla_type::kF64;
        case ScalarType::ComplexFloat: return begen::xla_type::kC64;
        case ScalarType::ComplexDouble: return begen::xla_type::kC128;
        case ScalarType::Half: return begen::xla_type::kF16;
        case ScalarType::BFloat16: return begen::xla_type::kBF16;
        default: return 0;
    }
}

// One input against its contract: dtype, rank, device, layout, contiguity.
void check_tensor(const char* function, const char* name, const Tensor& t, ScalarType dtype, int64_t rank,
                  Device device) {
    const std::string p = std::string("parameter '") + name + "'";
    if (t.scalar_type() != dtype)
        fail(function, p + " must be " + dtype_name(dtype) + ", got " + dtype_name(t.scalar_type()));
    if (t.dim() != rank) {
        std::string shape;
        for (int64_t i = 0; i < t.dim(); ++i) shape += (i ? ", " : "") + std::to_string(t.size(i));
        fail(function, p + " must have rank " + std::to_string(rank) + ", got shape [" + shape + "]");
    }
    if (rank > begen::kMaxRank)
        fail(function, p + ": rank " + std::to_string(rank) + " exceeds BE::kMaxDim (" +
                           std::to_string(begen::kMaxRank) + ")");
    if (device == Device::kCpu && !t.is_cpu())
        fail(function, p + " must be on the CPU (a CPU kernel), got a tensor on another device");
    if (device == Device::kCuda && !t.is_cuda())
        fail(function, p + " must be on a CUDA device (a CUDA kernel), got a tensor on another device");
    if (t.layout() != torch::headeronly::Layout::Strided)
        fail(function, p + " must be a dense (strided) tensor");
    if (!t.is_contiguous())
        fail(function, p + " must be contiguous (the typed function makes a read-only input contiguous; a tensor updated in place must be so itself)");
}

// A tensor whose contract says less than all (an untyped tensor, or a
// dtype without a shape): its dtype when `dtype` is defined (else one begen
// kernels take), its rank when `rank` is not negative, its placement.
void check_loose(const char* function, const char* name, const Tensor& t, ScalarType dtype, int64_t rank,
                 Device device) {
    const std::string p = std::string("parameter '") + name + "'";
    if (dtype != ScalarType::Undefined && t.scalar_type() != dtype)
        fail(function, p + " must be " + dtype_name(dtype) + ", got " + dtype_name(t.scalar_type()));
    if (dtype == ScalarType::Undefined && xla_code(t.scalar_type()) == 0)
        fail(function, p + " has " + dtype_name(t.scalar_type()));
    if (rank >= 0) {
        check_tensor(function, name, t, t.scalar_type(), rank, device);
        return;
    }
    if (t.dim() > begen::kMaxRank)
        fail(function, p + ": rank " + std::to_string(t.dim()) + " exceeds BE::kMaxDim (" +
                           std::to_string(begen::kMaxRank) + ")");
    check_tensor(function, name, t, t.scalar_type(), t.dim(), device);
}

// An output the caller gives: on the device of the first input.
void same_device(const char* function, const char* name, const Tensor& t, const char* first, const Tensor& like) {
    if (t.is_cpu() != like.is_cpu() || t.is_cuda() != like.is_cuda() || t.get_device_index() != like.get_device_index())
        fail(function, std::string("parameter '") + name + "' must be on the device of parameter '" + first +
                           "' (device index " + std::to_string(like.get_device_index()) + "), got device index " +
                           std::to_string(t.get_device_index()));
}

// A dimension's extent at `axis` of `t` against its value read first.
void dim_eq(const char* function, const char* dim, int64_t value, const char* first, int64_t first_axis,
            const char* name, const Tensor& t, int64_t axis) {
    const int64_t got = t.size(axis);
    if (got == value) return;
    const std::string from = first_axis < 0 ? std::string("attribute '") + first + "'"
                                            : std::string("parameter '") + first + "', axis " + std::to_string(first_axis);
    fail(function, std::string("dimension '") + dim + "' is " + std::to_string(value) + " (" + from +
                       ") but parameter '" + name + "' has " + std::to_string(got) + " at axis " + std::to_string(axis));
}

void fixed_eq(const char* function, const char* name, const Tensor& t, int64_t axis, int64_t want) {
    if (t.size(axis) != want)
        fail(function, std::string("parameter '") + name + "' dimension " + std::to_string(axis) + " must be " +
                           std::to_string(want) + ", got " + std::to_string(t.size(axis)));
}

// An integer attribute that sizes a dimension.
int64_t size_attr(const char* function, const char* name, int64_t value) {
    if (value < 0)
        fail(function, std::string("attribute '") + name + "' sizes dimension '" + name +
                           "': it must not be negative, got " + std::to_string(value));
    return value;
}

void attr_dim_eq(const char* function, const char* name, int64_t value, int64_t dim) {
    if (value != dim)
        fail(function, std::string("dimension '") + name + "' is " + std::to_string(dim) +
                           " (from the inputs) but attribute '" + name + "' is " + std::to_string(value));
}

// Whether an integer from the schema fits the kernel's integer type (any
// other value does: a float narrows as the JAX side's numpy cast does).
template <typename T, typename V>
bool fits(V value) {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool> && std::is_integral_v<V> &&
                  !std::is_same_v<V, bool>) {
        if constexpr (std::is_signed_v<T>) {
            return value >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
                   value <= static_cast<int64_t>(std::numeric_limits<T>::max());
        } else {
            return value >= 0 && static_cast<uint64_t>(value) <= std::numeric_limits<T>::max();
        }
    }
    return true;
}

// An attribute's value as the kernel's type, range-checked for integers.
template <typename T, typename V>
T attr(const char* function, const char* name, V value) {
    if (!fits<T>(value))
        fail(function, std::string("attribute '") + name + "' = " + std::to_string(value) + " does not fit its type");
    return static_cast<T>(value);
}

// An array attribute's elements as the kernel's element type (a bool as a
// byte), each integer range-checked; the message names the element.
template <typename T, typename V>
std::vector<T> attr_array(const char* function, const char* name, const std::vector<V>& values) {
    std::vector<T> elements;
    elements.reserve(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
        const V value = values[i];
        if (!fits<T>(value))
            fail(function, std::string("attribute '") + name + "'[" + std::to_string(i) + "] = " + std::to_string(value) +
                               " does not fit its type");
        elements.push_back(static_cast<T>(value));
    }
    return elements;
}

// A dimension's value as a `dim.` parameter's type.
template <typename T>
T dim_value(const char* function, const char* dim, const char* param, int64_t value) {
    if (value > static_cast<int64_t>(std::numeric_limits<T>::max()))
        fail(function, std::string("dimension '") + dim + "' = " + std::to_string(value) + " does not fit parameter '" +
                           param + "'");
    return static_cast<T>(value);
}

// A new output on the device of `like`.
Tensor alloc(const Tensor& like, std::vector<int64_t> sizes, ScalarType dtype) {
    return torch::stable::new_empty(like, sizes, dtype);
}

begen::TensorArg tensor_arg(const Tensor& t, int32_t code) {
    return begen::TensorArg{t.data_ptr(), t.sizes().data(), t.dim(), code};
}

// torch's current stream on the device of `t`, as the trampoline takes it.
int64_t stream_of(const Tensor& t) {
    void* stream = nullptr;
    if (aoti_torch_get_current_cuda_stream == nullptr ||
        aoti_torch_get_current_cuda_stream(t.get_device_index(), &stream) != 0)
        throw std::runtime_error("begen: torch has no current CUDA stream for the device");
    return reinterpret_cast<int64_t>(stream);
}

// The trampoline's message, if any, as the op's error: the text after its
// first byte, which holds the XLA error code the JAX side's glue reads
// (begen::tr::failed).
void call(const char* function, const char* failure) {
    if (failure != nullptr) fail(function, failure[0] == '\0' ? failure : failure + 1);
}

}  // namespace
}  // namespace begen::torch_rt

