// begen support headers: the word buffer of a cuTile list argument
// (`cutile_python_v1`'s ListConstraint), written on the launch stream.
//
// A list of L arrays of rank n is passed to its kernel as a device pointer to
// (1 + 2n) * L 64-bit words (per element: its data address, its n extents,
// its n strides) and an int32 length. The words hold device addresses known
// only at the call, so the handler writes them into a hidden output buffer
// (its own, sized by the Python function) right before the launch, on the
// same stream: not with a host-to-device copy (a copy from pageable memory is
// refused while XLA captures the stream into a CUDA graph, and a pinned one
// would be read again by every replay, after the handler returned), but by
// launching `begen_write_words`, a kernel whose parameters carry the words by
// value. A launch copies its parameters, so a captured graph replays exactly
// the words of the call it recorded; XLA records again when the buffers move.
//
// Generated code only (the binaries TU).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "begen/abi.h"
#include "begen/binary_launch.h"
#include "begen/cuda_driver.h"

namespace begen {
namespace cuda {

/// Words per launch of `begen_write_words`: with the destination and the
/// count, 4016 bytes of parameters, inside the 4 KiB every architecture and
/// driver takes.
constexpr unsigned kWordsPerLaunch = 500;
/// Threads of its one block: one word each.
constexpr unsigned kWordsThreads = 512;

/// `begen_write_words(u64 dst, u32 count, b8 words[8 * kWordsPerLaunch])`:
/// thread i < count stores words[i] at dst + 8 i (global memory). Written
/// for the oldest targets the driver JIT-compiles (PTX ISA 7.0, sm_52); a
/// kernel parameter's address is taken with `mov` and read with `ld.param`.
inline constexpr char kWordsPtx[] = R"(//
// begen: writes a cuTile list's word buffer (begen/list_words.h).
.version 7.0
.target sm_52
.address_size 64

.visible .entry begen_write_words(
	.param .u64 begen_dst,
	.param .u32 begen_count,
	.param .align 8 .b8 begen_words[4000]
)
{
	.reg .pred %p<2>;
	.reg .b32 %r<5>;
	.reg .b64 %rd<8>;

	mov.u32 %r1, %tid.x;
	mov.u32 %r2, %ntid.x;
	mov.u32 %r3, %ctaid.x;
	mad.lo.u32 %r1, %r3, %r2, %r1;
	ld.param.u32 %r4, [begen_count];
	setp.ge.u32 %p1, %r1, %r4;
	@%p1 bra DONE;
	mul.wide.u32 %rd1, %r1, 8;
	mov.u64 %rd2, begen_words;
	add.u64 %rd3, %rd2, %rd1;
	ld.param.u64 %rd4, [%rd3];
	ld.param.u64 %rd5, [begen_dst];
	cvta.to.global.u64 %rd6, %rd5;
	add.u64 %rd7, %rd6, %rd1;
	st.global.u64 [%rd7], %rd4;
DONE:
	ret;
}
)";

static_assert(kWordsPerLaunch * 8 == 4000, "the PTX's begen_words parameter holds kWordsPerLaunch words");
static_assert(kWordsThreads >= kWordsPerLaunch, "one thread per word");

/// The library's `begen_write_words`, loaded (JIT-compiled from its PTX) once
/// per device context like any bound kernel.
BEGEN_HIDDEN inline Kernel& words_kernel() {
    static Kernel k("begen_write_words", kWordsPtx, sizeof(kWordsPtx), "begen_write_words");
    return k;
}

/// Writes 64-bit words to consecutive device addresses from `dst` on
/// `stream`: buffered, one `begen_write_words` launch per kWordsPerLaunch
/// words and one for the rest at `finish`. After a failed launch it writes
/// nothing more; `finish` returns the first error (empty on success).
class WordWriter {
public:
    WordWriter(Kernel& kernel, CUstream stream, void* dst) noexcept
        : kernel_(kernel), stream_(stream), dst_(reinterpret_cast<uintptr_t>(dst)) {}

    WordWriter(const WordWriter&) = delete;
    WordWriter& operator=(const WordWriter&) = delete;

    void put(uint64_t word) noexcept {
        if (!error_.empty()) return;
        chunk_[count_++] = word;
        if (count_ == kWordsPerLaunch) flush();
    }

    /// One list element: its address, extents and row-major strides
    /// (elements), as the kernel's element assumptions were checked on
    /// (`begen::bin::check_element`).
    void put_array(const void* data, const int64_t* dims, size_t rank) noexcept {
        put(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(data)));
        int64_t shape[kMaxArrayRank], strides[kMaxArrayRank];
        if (rank > kMaxArrayRank) {
            error_ = "a list element of rank " + std::to_string(rank) + " (begen writes up to " +
                     std::to_string(kMaxArrayRank) + ")";
            return;
        }
        begen::bin::dense_layout(dims, rank, shape, strides);
        for (size_t k = 0; k < rank; ++k) put(static_cast<uint64_t>(shape[k]));
        for (size_t k = 0; k < rank; ++k) put(static_cast<uint64_t>(strides[k]));
    }

    std::string finish() noexcept {
        if (error_.empty() && count_ > 0) flush();
        return error_;
    }

    /// Words written so far (launched).
    size_t written() const noexcept { return written_; }

private:
    /// The largest element rank `put_array` lays out (XLA's buffers have at
    /// most a few dozen dimensions).
    static constexpr size_t kMaxArrayRank = 64;

    void flush() noexcept {
        uint64_t dst = static_cast<uint64_t>(dst_ + written_ * 8);
        unsigned count = count_;
        void* params[3] = {&dst, &count, chunk_};
        error_ = kernel_.launch(stream_, Dim3{1, 1, 1}, Dim3{kWordsThreads, 1, 1}, 0, params);
        written_ += count_;
        count_ = 0;
    }

    Kernel& kernel_;
    CUstream stream_;
    uintptr_t dst_;
    size_t written_ = 0;
    unsigned count_ = 0;
    std::string error_;
    uint64_t chunk_[kWordsPerLaunch] = {};
};

}  // namespace cuda
}  // namespace begen
