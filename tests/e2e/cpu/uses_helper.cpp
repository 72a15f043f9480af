// Calls a function defined in another (un-annotated) source of the library.
#include <cstdint>

#include "brainevent/common.h"

extern "C" int64_t e2e_helper_answer();

// @BE fill_answer
void fill_answer(BE::Tensor out) {
    float* o = out.data_ptr<float>();
    for (int64_t i = 0; i < out.numel(); ++i) o[i] = static_cast<float>(e2e_helper_answer());
}
