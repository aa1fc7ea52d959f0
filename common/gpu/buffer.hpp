// Device memory with RAII, and the allocator's byte count that the chapter's "peak MB" column reads.
//
// A DeviceBuffer owns `count` floats of device memory: allocated in its constructor, freed in its
// destructor, movable, never copied. Every allocation and free goes through one ledger, which keeps the
// bytes held now and the most held since the last reset_peak() — the chapter's "byte count of the
// allocator", not the driver's page-rounded view. The ledger can also pretend the device is smaller
// (set_limit): an allocation past the limit fails exactly like a real one, with OutOfMemory, so the
// table's "OUT OF MEMORY" rows of an 8 GB card can be shown on a bigger one.
//
// Plain C++: no CUDA types, so programs and tests compiled without nvcc use it; the members that touch
// the device are defined in buffer.cu.
#pragma once

#include <cstddef>
#include <string>

#include "core/error.hpp"

namespace attn::gpu {

// A device allocation that does not fit (the real device's memory, or the ledger's simulated limit).
class OutOfMemory : public Error {
public:
    using Error::Error;
};

// Bytes held by DeviceBuffers: now, at most since the last reset_peak(), and an optional limit.
// Single-threaded, as every program and test here is.
class MemoryLedger {
public:
    bool admits(std::size_t bytes) const { return limit_ == 0 || (current_ <= limit_ && bytes <= limit_ - current_); }
    void allocated(std::size_t bytes) {
        current_ += bytes;
        if (current_ > peak_) peak_ = current_;
    }
    void freed(std::size_t bytes) { current_ = bytes <= current_ ? current_ - bytes : 0; }
    void reset_peak() { peak_ = current_; }
    void set_limit(std::size_t bytes) { limit_ = bytes; }  // 0: no limit but the device's own
    std::size_t current() const { return current_; }
    std::size_t peak() const { return peak_; }
    std::size_t limit() const { return limit_; }

private:
    std::size_t current_ = 0, peak_ = 0, limit_ = 0;
};

// The process's ledger, which every DeviceBuffer reports to.
MemoryLedger& ledger();
// Throws OutOfMemory, naming `what` and the ledger's state, unless `bytes` more fit under its limit.
void require_ledger_room(std::size_t bytes, const std::string& what);

class DeviceBuffer {
public:
    DeviceBuffer() = default;
    // `count` floats, uninitialised. `what` names the buffer in the error, e.g. "scores (B·h, T, T)".
    // Throws OutOfMemory when it does not fit, attn::Error for any other CUDA failure.
    explicit DeviceBuffer(std::size_t count, const std::string& what = "a device buffer");
    ~DeviceBuffer();
    DeviceBuffer(DeviceBuffer&& other) noexcept;
    DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;

    float* data() { return ptr_; }
    const float* data() const { return ptr_; }
    std::size_t size() const { return count_; }  // floats
    std::size_t bytes() const { return count_ * sizeof(float); }

    void upload(const float* host, std::size_t count);  // host → device, count ≤ size()
    void download(float* host, std::size_t count) const;  // device → host
    void zero();
    // Every float NaN (every bit set: 0xFFFFFFFF is a NaN). Before a kernel writes a buffer, so that an
    // element it skips reads NaN, which every comparison catches — never a lucky zero or an older result.
    void poison();

private:
    void release() noexcept;
    float* ptr_ = nullptr;
    std::size_t count_ = 0;
};

// `count` ints of device memory (token ids, targets, index lists), on the same ledger; as DeviceBuffer.
class DeviceInts {
public:
    DeviceInts() = default;
    explicit DeviceInts(std::size_t count, const std::string& what = "device ints");
    ~DeviceInts();
    DeviceInts(DeviceInts&& other) noexcept;
    DeviceInts& operator=(DeviceInts&& other) noexcept;
    DeviceInts(const DeviceInts&) = delete;
    DeviceInts& operator=(const DeviceInts&) = delete;

    int* data() { return ptr_; }
    const int* data() const { return ptr_; }
    std::size_t size() const { return count_; }
    void upload(const int* host, std::size_t count);  // count ≤ size()
    void download(int* host, std::size_t count) const;

private:
    void release() noexcept;
    int* ptr_ = nullptr;
    std::size_t count_ = 0;
};

// `count` floats at a device address (inside some DeviceBuffer: a layer's output) → host; waits for the copy.
void download_floats(const float* device, float* host, std::size_t count);

// "512.0 MiB", "1.50 GiB": a byte count for messages.
std::string format_bytes(std::size_t bytes);

}  // namespace attn::gpu
