// Per-executable state of `BE::Tensor` kernels (`T& state`): begen.yaml's
// `instantiate:` function creates it once per executable, and every call
// of that executable gets the same one: tests/python/test_e2e_vocab_state.py.
#include <cstdint>
#include <memory>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "brainevent/common.h"

struct Counter {
  int32_t value;
};

std::unique_ptr<Counter> MakeCounter() { return std::make_unique<Counter>(Counter{42}); }

// out = the count of this executable's calls, from 42.
// @BE ReadCounter
void ReadCounter(BE::Tensor out, Counter& counter) {
  static_cast<int32_t*>(out.data_ptr())[0] = counter.value++;
}

// Typed pointers with the state stated beside tokens (it takes none):
// y[i] = x[i] + the count, from 42.
// @BE AddCount arg:float32[n] ret:float32[n] dim.n
void AddCount(const float* x, float* y, Counter& counter, int64_t n) {
  const float c = static_cast<float>(counter.value++);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] + c;
}

// A state whose creation fails: the executable is not created, and the
// error names the function that threw.
std::unique_ptr<Counter> MakeBroken() { throw std::invalid_argument("no counter today"); }

// @BE Broken
void Broken(BE::Tensor out, Counter& counter) { static_cast<int32_t*>(out.data_ptr())[0] = counter.value; }

// out = the count, read, then written back one higher a millisecond later:
// two calls inside that millisecond at once would read the same count.
// The glue lets calls that share a state take turns, so every call reads
// another count (the shards of a shard_map or pmap, threads).
// @BE SlowCounter
void SlowCounter(BE::Tensor out, Counter& counter) {
  const int32_t seen = counter.value;
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
  counter.value = seen + 1;
  static_cast<int32_t*>(out.data_ptr())[0] = seen;
}
