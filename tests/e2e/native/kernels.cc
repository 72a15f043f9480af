// Kernels declared with XLA FFI's own types (bound as declared, called
// directly) and kernels that return a status: a failure reaches Python
// with its code (tests/python/test_e2e_native.py).
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string_view>
#include <thread>
#include "xla/ffi/api/ffi.h"
#include "brainevent/common.h"
namespace ffi = xla::ffi;

// @BE ScaleImpl
ffi::Error ScaleImpl(float factor, ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y) {
  if (x.dimensions().size() == 0) return ffi::Error::InvalidArgument("scale: x must be an array");
  for (size_t i = 0; i < x.element_count(); ++i) y->typed_data()[i] = factor * x.typed_data()[i];
  return ffi::Error::Success();
}

// @BE SumArray
ffi::Error SumArray(ffi::Span<const int32_t> array, ffi::ResultBufferR0<ffi::S32> res) {
  int64_t t = 0; for (int32_t v : array) t += v;
  res->typed_data()[0] = t;
  return ffi::Error::Success();
}

// @BE DictAttr
ffi::Error DictAttr(ffi::Dictionary attrs, ffi::ResultBufferR0<ffi::S32> secret, ffi::ResultBufferR0<ffi::S32> count) {
  auto s = attrs.get<int64_t>("secret");
  if (s.has_error()) return s.error();
  secret->typed_data()[0] = s.value();
  count->typed_data()[0] = attrs.size();
  return ffi::Error::Success();
}

// @BE checked_copy
BE::Status checked_copy(const BE::Tensor x, BE::Tensor y) {
  if (x.ndim() == 0) return BE::Status::InvalidArgument("x must be an array");
  for (int64_t i = 0; i < x.numel(); ++i) y.data_ptr<float>()[i] = x.data_ptr<float>()[i];
  return BE::Status::Ok();
}

// @BE returns_error
xla::ffi::Error returns_error(const BE::Tensor x, BE::Tensor y) {
  if (x.ndim() == 0) return xla::ffi::Error::InvalidArgument("x must be an array");
  for (int64_t i = 0; i < x.numel(); ++i) y.data_ptr<float>()[i] = x.data_ptr<float>()[i];
  return xla::ffi::Error::Success();
}

// @BE plain_check
void plain_check(const BE::Tensor x, BE::Tensor y) {
  BE_CHECK(x.ndim() > 0) << "x must be an array";
  for (int64_t i = 0; i < x.numel(); ++i) y.data_ptr<float>()[i] = x.data_ptr<float>()[i];
}

// @BE arg_check
void arg_check(const BE::Tensor x, BE::Tensor y) {
  BE_CHECK_ARG(x.ndim() > 0) << "x must be an array";
  for (int64_t i = 0; i < x.numel(); ++i) y.data_ptr<float>()[i] = x.data_ptr<float>()[i];
}

// An input declared as a result and bound as an input by its token, as a
// hand-written `.Arg<>()` may bind it (jax's cuda_examples' `b_plus_1`);
// tokens also give an attribute's default.
// @BE MulAdd arg arg ret attr.k=2
ffi::Error MulAdd(ffi::Buffer<ffi::F32> a, ffi::ResultBuffer<ffi::F32> b, ffi::ResultBuffer<ffi::F32> c, int64_t k) {
  for (size_t i = 0; i < a.element_count(); ++i) c->typed_data()[i] = a.typed_data()[i] * b->typed_data()[i] + k;
  return ffi::Error::Success();
}

// A string attribute (`std::string_view`): a Python `str` keyword.
// @BE Greet
ffi::Error Greet(std::string_view word, ffi::ResultBufferR0<ffi::S32> size) {
  if (word == "fail") return ffi::Error::InvalidArgument("word must not be 'fail'");
  size->typed_data()[0] = static_cast<int32_t>(word.size());
  return ffi::Error::Success();
}

// Per-executable state, declared as jax's gpu_examples declares it (the
// `TypeId` is left unused): MakeCounter (begen.yaml's `instantiate:`) makes
// one for each device that runs an executable, and each call of ReadCounter
// there gets it.
struct CounterState {
  static xla::ffi::TypeId id;
  explicit CounterState(int32_t value) : value(value) {}
  int32_t value;
};
xla::ffi::TypeId CounterState::id = {};

static ffi::ErrorOr<std::unique_ptr<CounterState>> MakeCounter() { return std::make_unique<CounterState>(42); }

// @BE ReadCounter
ffi::Error ReadCounter(CounterState* state, ffi::ResultBufferR0<ffi::S32> out) {
  out->typed_data()[0] = state->value++;
  return ffi::Error::Success();
}

// A state with no TypeId of its own: the glue's holder of the devices'
// states is the type XLA knows.
// `serial` tells the states apart: the how-manieth state made in the
// process.
struct SlowState {
  int32_t value;
  int32_t serial;
};

static ffi::ErrorOr<std::unique_ptr<SlowState>> MakeSlowState() {
  static std::atomic<int32_t> made{0};
  return std::make_unique<SlowState>(SlowState{42, made++});
}

// out[0] = the count, read, then written back one higher a millisecond
// later: two calls inside that millisecond on one state would read the
// same count. Each device has a state of its own, and calls on one device
// take turns (tests/python/test_e2e_native.py).
// @BE NativeSlowCounter
ffi::Error NativeSlowCounter(SlowState* state, ffi::ResultBuffer<ffi::S32> out) {
  const int32_t seen = state->value;
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
  state->value = seen + 1;
  out->typed_data()[0] = seen;
  return ffi::Error::Success();
}

// out[0] = the serial of the call's state: the shards of a shard_map over
// 4 devices read 4 serials (one shared state would give one).
// @BE NativeStateSerial
ffi::Error NativeStateSerial(SlowState* state, ffi::ResultBuffer<ffi::S32> out) {
  out->typed_data()[0] = state->serial;
  return ffi::Error::Success();
}

// States never made: an error returned, and no state at all. The call that
// needed the state fails with the error (its code kept), or names the
// function.
static ffi::ErrorOr<std::unique_ptr<SlowState>> MakeNoState() {
  return ffi::Unexpected<ffi::Error>(ffi::Error(ffi::ErrorCode::kUnavailable, "no state today"));
}
static ffi::ErrorOr<std::unique_ptr<SlowState>> MakeNullState() { return std::unique_ptr<SlowState>(); }

// @BE NativeNoState
ffi::Error NativeNoState(SlowState* state, ffi::ResultBufferR0<ffi::S32> out) {
  out->typed_data()[0] = state->value;
  return ffi::Error::Success();
}

// @BE NativeNullState
ffi::Error NativeNullState(SlowState* state, ffi::ResultBufferR0<ffi::S32> out) {
  out->typed_data()[0] = state->value;
  return ffi::Error::Success();
}
