// An un-annotated source: compiled as it is and linked into the library.
#include <cstdint>

extern "C" int64_t e2e_helper_answer() { return 42; }
