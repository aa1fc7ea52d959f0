// DeviceBuffer and DeviceInts: cudaMalloc in the constructor, cudaFree in the destructor, every byte on the ledger.
#include <cstdio>
#include <utility>

#include "buffer.hpp"
#include "check.cuh"

namespace attn::gpu {

DeviceBuffer::DeviceBuffer(std::size_t count, const std::string& what) {
    if (count == 0) return;
    const std::size_t bytes = count * sizeof(float);
    require_ledger_room(bytes, what);
    void* p = nullptr;
    const cudaError_t err = cudaMalloc(&p, bytes);
    if (err == cudaErrorMemoryAllocation) {
        cudaGetLastError();  // an allocation failure is not sticky; clear it so later calls start clean
        std::size_t free_bytes = 0, total_bytes = 0;
        cudaMemGetInfo(&free_bytes, &total_bytes);  // for the message only: on failure it reads 0 of 0
        throw OutOfMemory("gpu::DeviceBuffer: cudaMalloc of " + format_bytes(bytes) + " for " + what +
                          " failed: out of memory (" + format_bytes(free_bytes) + " free of " + format_bytes(total_bytes) +
                          " on the device)");
    }
    ATTN_CUDA_CHECK(err);
    ptr_ = static_cast<float*>(p);
    count_ = count;
    ledger().allocated(bytes);
}

void DeviceBuffer::release() noexcept {
    if (ptr_ == nullptr) return;
    // No throw from a destructor: a failing cudaFree (the runtime already shut down at exit) is ignored.
    cudaFree(ptr_);
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
    if (count > 0) ATTN_CUDA_CHECK(cudaMemcpy(ptr_, host, count * sizeof(float), cudaMemcpyHostToDevice));
}

void DeviceBuffer::download(float* host, std::size_t count) const {
    require(count <= count_, "gpu::DeviceBuffer::download",
            std::to_string(count) + " floats from a buffer of " + std::to_string(count_));
    if (count > 0) ATTN_CUDA_CHECK(cudaMemcpy(host, ptr_, count * sizeof(float), cudaMemcpyDeviceToHost));
}

void DeviceBuffer::zero() {
    if (count_ > 0) ATTN_CUDA_CHECK(cudaMemset(ptr_, 0, bytes()));
}

void DeviceBuffer::poison() {
    if (count_ > 0) ATTN_CUDA_CHECK(cudaMemset(ptr_, 0xFF, bytes()));
}

}  // namespace attn::gpu

namespace attn::gpu {

// --- DeviceInts: the same, for ints ------------------------------------------------------------------------------
DeviceInts::DeviceInts(std::size_t count, const std::string& what) {
    if (count == 0) return;
    const std::size_t bytes = count * sizeof(int);
    require_ledger_room(bytes, what);
    void* p = nullptr;
    const cudaError_t err = cudaMalloc(&p, bytes);
    if (err == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        throw OutOfMemory("gpu::DeviceInts: cudaMalloc of " + format_bytes(bytes) + " for " + what + " failed: out of memory");
    }
    ATTN_CUDA_CHECK(err);
    ptr_ = static_cast<int*>(p);
    count_ = count;
    ledger().allocated(bytes);
}

void DeviceInts::release() noexcept {
    if (ptr_ == nullptr) return;
    cudaFree(ptr_);
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
    if (count > 0) ATTN_CUDA_CHECK(cudaMemcpy(ptr_, host, count * sizeof(int), cudaMemcpyHostToDevice));
}

void DeviceInts::download(int* host, std::size_t count) const {
    require(count <= count_, "gpu::DeviceInts::download",
            std::to_string(count) + " ints from a buffer of " + std::to_string(count_));
    if (count > 0) ATTN_CUDA_CHECK(cudaMemcpy(host, ptr_, count * sizeof(int), cudaMemcpyDeviceToHost));
}

}  // namespace attn::gpu
