// DeviceBuffer and DeviceInts: cudaMalloc in the constructor, cudaFree in the destructor, every byte on the ledger.
// The CUDA calls go through kernel_launch.cuh, so the unit tests compile this very file on the CPU emulator
// (tests/common), where each buffer sits between guard pages and starts with every byte 0xFF.
#include <string>
#include <utility>

#include "buffer.hpp"
#include "kernel_launch.cuh"

namespace attn::gpu {

DeviceBuffer::DeviceBuffer(std::size_t count, const std::string& what) {
    if (count == 0) return;
    const std::size_t bytes = count * sizeof(float);
    require_ledger_room(bytes, what);
    ptr_ = static_cast<float*>(allocate_device(bytes, what, "gpu::DeviceBuffer"));
    count_ = count;
    ledger().allocated(bytes);
}

void DeviceBuffer::release() noexcept {
    if (ptr_ == nullptr) return;
    free_device(ptr_);  // never throws: a failing cudaFree (the runtime already shut down at exit) is ignored
    ledger().freed(bytes());
    ptr_ = nullptr;
    count_ = 0;
}

DeviceBuffer::~DeviceBuffer() { release(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)), count_(std::exchange(other.count_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
        release();
        ptr_ = std::exchange(other.ptr_, nullptr);
        count_ = std::exchange(other.count_, 0);
    }
    return *this;
}

void DeviceBuffer::upload(const float* host, std::size_t count) {
    require(count <= count_, "gpu::DeviceBuffer::upload",
            std::to_string(count) + " floats into a buffer of " + std::to_string(count_));
    if (count > 0) copy_to_device(ptr_, host, count * sizeof(float), "a DeviceBuffer's floats");
}

void DeviceBuffer::download(float* host, std::size_t count) const {
    require(count <= count_, "gpu::DeviceBuffer::download",
            std::to_string(count) + " floats from a buffer of " + std::to_string(count_));
    if (count > 0) copy_to_host(host, ptr_, count * sizeof(float), "a DeviceBuffer's floats");
}

void download_floats(const float* device, float* host, std::size_t count) {
    if (count > 0) copy_to_host(host, device, count * sizeof(float), "device floats");
}

void DeviceBuffer::zero() {
    if (count_ > 0) fill_device_bytes(ptr_, 0, bytes(), "a DeviceBuffer");
}

void DeviceBuffer::poison() {
    if (count_ > 0) fill_device_bytes(ptr_, 0xFF, bytes(), "a DeviceBuffer");
}

// --- DeviceInts: the same, for ints ------------------------------------------------------------------------------
DeviceInts::DeviceInts(std::size_t count, const std::string& what) {
    if (count == 0) return;
    const std::size_t bytes = count * sizeof(int);
    require_ledger_room(bytes, what);
    ptr_ = static_cast<int*>(allocate_device(bytes, what, "gpu::DeviceInts"));
    count_ = count;
    ledger().allocated(bytes);
}

void DeviceInts::release() noexcept {
    if (ptr_ == nullptr) return;
    free_device(ptr_);
    ledger().freed(count_ * sizeof(int));
    ptr_ = nullptr;
    count_ = 0;
}

DeviceInts::~DeviceInts() { release(); }

DeviceInts::DeviceInts(DeviceInts&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)), count_(std::exchange(other.count_, 0)) {}

DeviceInts& DeviceInts::operator=(DeviceInts&& other) noexcept {
    if (this != &other) {
        release();
        ptr_ = std::exchange(other.ptr_, nullptr);
        count_ = std::exchange(other.count_, 0);
    }
    return *this;
}

void DeviceInts::upload(const int* host, std::size_t count) {
    require(count <= count_, "gpu::DeviceInts::upload", std::to_string(count) + " ints into a buffer of " + std::to_string(count_));
    if (count > 0) copy_to_device(ptr_, host, count * sizeof(int), "a DeviceInts' ints");
}

void DeviceInts::download(int* host, std::size_t count) const {
    require(count <= count_, "gpu::DeviceInts::download",
            std::to_string(count) + " ints from a buffer of " + std::to_string(count_));
    if (count > 0) copy_to_host(host, ptr_, count * sizeof(int), "a DeviceInts' ints");
}

}  // namespace attn::gpu
