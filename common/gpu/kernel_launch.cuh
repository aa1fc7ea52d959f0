// A kernel launch written once for two machines:
//   attn::gpu::launch(kernel, grid, block, shared_bytes, args...)
//   attn::gpu::launch("name", kernel, grid, block, shared_bytes, args...)   (the name goes into a launch error)
// is, under nvcc, kernel<<<grid, block, shared_bytes>>>(args...) followed by the launch check; in a C++
// translation unit that included tests/common/cuda_on_cpu.hpp first, it is cuda_on_cpu::launch, which runs
// the same kernel source on the CPU, one thread per CUDA thread. The GPU exercises (exercises/11_gpu), the
// training operations (train_layers.cu, attention_train.cu), attention.cu and buffer.cu launch and allocate
// this way, so the unit tests compile those very files on the CPU. The other calls their host code needs,
// written once the same way:
//   allocate_device(bytes, "what", "who")               cudaMalloc; OutOfMemory when it does not fit (the emulator:
//                                                       guarded memory named "what", every byte 0xFF: floats NaN, ints −1)
//   free_device(pointer)                                cudaFree, never throws
//   copy_to_device(device, host, bytes, "what")         cudaMemcpy host → device (the emulator: memcpy)
//   copy_to_host(host, device, bytes, "what")           cudaMemcpy device → host (the emulator: memcpy)
//   fill_device_bytes(device, byte, bytes, "what")      cudaMemset
//   allow_shared_bytes(kernel, bytes, "kernel name")    lets a kernel take more than 48 KB of dynamic shared memory
//                                                       (the emulator: refused past its card's limit, as CUDA does)
//   shared_bytes_per_block()                            the most shared memory a block may opt in to on this device
//                                                       (the emulator: the card it imitates, 227 KB unless a test says)
//   sgemm(…), sgemm_strided_batched(…)                  cuBLAS's column-major SGEMM, plain fp32 (the emulator: a
//                                                       column-major loop in double, cuda_on_cpu_runtime.cpp)
//   synchronize_device(), time_device_ms(work)          wait for the device; time work with CUDA events (the emulator:
//                                                       nothing to wait for; the host's clock)
//   begin_capture(), end_capture() → GraphHandle,       CUDA Graphs: between the first two, launches, products and fills
//   launch_graph(g), destroy_graph(g), abort_capture()  are recorded (on a capturing stream), not run; a copy or a wait
//                                                       there throws (a host sync inside the step). launch_graph replays
//                                                       the recording on the default stream (the emulator: closures)
// Each failure throws attn::Error naming the kernel or what was copied.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>

#include "buffer.hpp"
#include "launch.hpp"

namespace attn::gpu {
// A copy, a wait or an allocation while a CUDA Graph is being recorded (capturing(), below for each machine):
// refused, naming it. Callers test capturing() first, so the message is built only for the refusal.
[[noreturn]] inline void refuse_in_capture(const std::string& what) {
    throw ::attn::Error(what + " inside a CUDA Graph's capture: a recording holds no host copy, wait or allocation");
}
}  // namespace attn::gpu

#if defined(__CUDACC__)
#include "check.cuh"

namespace attn::gpu {
// The stream work goes to: null (the default stream), or the capturing stream while a CUDA Graph is recorded.
inline cudaStream_t& launch_stream() {
    static cudaStream_t stream = nullptr;
    return stream;
}
inline bool capturing() { return launch_stream() != nullptr; }
template <class... Params, class... Args>
void launch(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t shared_bytes, Args... args) {
    kernel<<<grid, block, shared_bytes, launch_stream()>>>(args...);
    ATTN_CUDA_CHECK_LAUNCH("a kernel");  // a bad launch configuration shows here, not at the next call
}
template <class... Params, class... Args>
void launch(const char* name, void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t shared_bytes, Args... args) {
    kernel<<<grid, block, shared_bytes, launch_stream()>>>(args...);
    ATTN_CUDA_CHECK_LAUNCH(name);
}
inline void* allocate_device(std::size_t bytes, const std::string& what, const char* who) {
    if (capturing()) refuse_in_capture("allocating " + what);  // a recording keeps pointers: its buffers exist before it
    ++device_work().allocations;
    void* p = nullptr;
    const cudaError_t err = cudaMalloc(&p, bytes);
    if (err == cudaErrorMemoryAllocation) {
        cudaGetLastError();  // an allocation failure is not sticky; clear it so later calls start clean
        std::size_t free_bytes = 0, total_bytes = 0;
        cudaMemGetInfo(&free_bytes, &total_bytes);  // for the message only: on failure it reads 0 of 0
        throw OutOfMemory(std::string(who) + ": cudaMalloc of " + format_bytes(bytes) + " for " + what +
                          " failed: out of memory (" + format_bytes(free_bytes) + " free of " + format_bytes(total_bytes) +
                          " on the device)");
    }
    ATTN_CUDA_CHECK(err);
    return p;
}
inline void free_device(void* device) noexcept { cudaFree(device); }  // at exit the runtime may be gone: ignored
inline void copy_to_device(void* device, const void* host, std::size_t bytes, const char* what) {
    if (capturing()) refuse_in_capture(std::string("copying ") + what + " to the device");
    ++device_work().copies_to_device;
    const cudaError_t err = cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice);
    if (err != cudaSuccess)
        throw ::attn::Error(std::string("copying ") + what + " (" + std::to_string(bytes) + " bytes) to the device failed: " +
                            cudaGetErrorString(err));
}
inline void copy_to_host(void* host, const void* device, std::size_t bytes, const char* what) {
    if (capturing()) refuse_in_capture(std::string("copying ") + what + " to the host");
    ++device_work().copies_to_host;
    const cudaError_t err = cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost);
    if (err != cudaSuccess)
        throw ::attn::Error(std::string("copying ") + what + " (" + std::to_string(bytes) + " bytes) to the host failed: " +
                            cudaGetErrorString(err));
}
inline void fill_device_bytes(void* device, int byte, std::size_t bytes, const char* what) {
    ++device_work().fills;
    const cudaError_t err = cudaMemsetAsync(device, byte, bytes, launch_stream());
    if (err != cudaSuccess)
        throw ::attn::Error(std::string("filling ") + what + " (" + std::to_string(bytes) + " bytes) failed: " +
                            cudaGetErrorString(err));
}
// One cuBLAS handle for the process, created on first use, with a workspace we own (32 MiB, cuBLAS's
// recommendation for Hopper) so that no allocation escapes the ledger. Products are plain fp32
// (CUBLAS_DEFAULT_MATH: no TF32 tensor cores), so the GPU matches the CPU's OpenBLAS to fp32 rounding, unless
// set_blas_tf32 turns TF32 on.
class Blas {
public:
    static Blas& get() {
        static Blas blas;
        return blas;
    }
    cublasHandle_t handle() const { return handle_; }
    // Products go to `stream` from now on (a capture's, or null: the default stream), on our workspace still:
    // cublasSetStream resets the workspace to cuBLAS's own pool, which would escape the ledger.
    void bind(cudaStream_t stream) {
        ATTN_CUBLAS_CHECK(cublasSetStream(handle_, stream));
        ATTN_CUBLAS_CHECK(cublasSetWorkspace(handle_, workspace_.data(), workspace_.bytes()));
    }
    ~Blas() { cublasDestroy(handle_); }  // errors at exit are ignored
    Blas(const Blas&) = delete;
    Blas& operator=(const Blas&) = delete;

private:
    static constexpr std::size_t kWorkspaceBytes = std::size_t{32} << 20;
    Blas() : workspace_(kWorkspaceBytes / sizeof(float), "cuBLAS's workspace") {
        ATTN_CUBLAS_CHECK(cublasCreate(&handle_));
        ATTN_CUBLAS_CHECK(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH));
        ATTN_CUBLAS_CHECK(cublasSetWorkspace(handle_, workspace_.data(), workspace_.bytes()));
    }
    DeviceBuffer workspace_;
    cublasHandle_t handle_ = nullptr;
};
// TF32 tensor cores for the products from now on, or plain fp32 again (ops.hpp: set_matmul).
inline void set_blas_tf32(bool on) {
    ATTN_CUBLAS_CHECK(cublasSetMathMode(Blas::get().handle(), on ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
}
inline cublasOperation_t blas_op(bool trans) { return trans ? CUBLAS_OP_T : CUBLAS_OP_N; }
// C = alpha op(A) op(B) + beta C, column-major (cublasSgemm)
inline void sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* A, int lda, const float* B, int ldb,
                  float beta, float* C, int ldc) {
    ++device_work().blas_calls;
    ATTN_CUBLAS_CHECK(cublasSgemm(Blas::get().handle(), blas_op(trans_a), blas_op(trans_b), m, n, k, &alpha, A, lda, B, ldb, &beta,
                                  C, ldc));
    if (sync_every_launch()) ATTN_CUDA_CHECK(cudaDeviceSynchronize());  // ATTN_GPU_SYNC: a fault in cuBLAS shows here
}
// the same for `batch` matrices at strides (cublasSgemmStridedBatched)
inline void sgemm_strided_batched(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* A, int lda,
                                  long long stride_a, const float* B, int ldb, long long stride_b, float beta, float* C, int ldc,
                                  long long stride_c, int batch) {
    ++device_work().blas_calls;
    ATTN_CUBLAS_CHECK(cublasSgemmStridedBatched(Blas::get().handle(), blas_op(trans_a), blas_op(trans_b), m, n, k, &alpha, A, lda,
                                                stride_a, B, ldb, stride_b, &beta, C, ldc, stride_c, batch));
    if (sync_every_launch()) ATTN_CUDA_CHECK(cudaDeviceSynchronize());  // ATTN_GPU_SYNC: a fault in cuBLAS shows here
}
inline void synchronize_device() {
    if (capturing()) refuse_in_capture("waiting for the device");
    ATTN_CUDA_CHECK(cudaDeviceSynchronize());
}
// --- CUDA Graphs ---------------------------------------------------------------------------------------------
using GraphHandle = cudaGraphExec_t;
inline void begin_capture() {
    if (capturing()) refuse_in_capture("beginning a capture");
    static const cudaStream_t stream = [] {  // only ever captured on: nothing runs on it
        cudaStream_t s = nullptr;
        ATTN_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        return s;
    }();
    Blas::get().bind(stream);
    // relaxed: what is not stream work (cudaFuncSetAttribute for flash's shared memory) stays allowed; an
    // allocation is refused by allocate_device itself
    const cudaError_t err = cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed);
    if (err != cudaSuccess) {
        Blas::get().bind(nullptr);
        ATTN_CUDA_CHECK(err);
    }
    launch_stream() = stream;
}
inline void abort_capture() noexcept {  // after a failure inside the capture: the stream and cuBLAS as they were
    if (!capturing()) return;
    const cudaStream_t stream = launch_stream();
    launch_stream() = nullptr;
    cudaGraph_t graph = nullptr;
    cudaStreamEndCapture(stream, &graph);
    if (graph) cudaGraphDestroy(graph);
    cudaGetLastError();  // clear what the broken capture left
    try {
        Blas::get().bind(nullptr);
    } catch (...) {  // already failing: the first error is the one reported
    }
}
inline GraphHandle end_capture() {
    const cudaStream_t stream = launch_stream();
    launch_stream() = nullptr;
    Blas::get().bind(nullptr);
    cudaGraph_t graph = nullptr;
    ATTN_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    cudaGraphExec_t exec = nullptr;
    const cudaError_t err = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    ATTN_CUDA_CHECK(err);
    return exec;
}
inline void launch_graph(GraphHandle graph) {
    ++device_work().graphs;
    ATTN_CUDA_CHECK(cudaGraphLaunch(graph, nullptr));
    if (sync_every_launch()) ATTN_CUDA_CHECK(cudaDeviceSynchronize());
}
inline void destroy_graph(GraphHandle graph) noexcept {
    if (graph) cudaGraphExecDestroy(graph);
}
// An event pair that is destroyed however the timed work ends.
struct EventPair {
    cudaEvent_t start = nullptr, stop = nullptr;
    EventPair() {
        ATTN_CUDA_CHECK(cudaEventCreate(&start));
        ATTN_CUDA_CHECK(cudaEventCreate(&stop));
    }
    ~EventPair() {
        cudaEventDestroy(start);
        cudaEventDestroy(stop);
    }
};
inline double time_device_ms(const std::function<void()>& work) {
    EventPair events;
    ATTN_CUDA_CHECK(cudaEventRecord(events.start));
    work();
    ATTN_CUDA_CHECK(cudaEventRecord(events.stop));
    ATTN_CUDA_CHECK(cudaEventSynchronize(events.stop));
    float ms = 0.0f;
    ATTN_CUDA_CHECK(cudaEventElapsedTime(&ms, events.start, events.stop));
    return ms;
}
inline std::size_t shared_bytes_per_block() {
    int device = 0, bytes = 0;
    ATTN_CUDA_CHECK(cudaGetDevice(&device));
    ATTN_CUDA_CHECK(cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    return static_cast<std::size_t>(bytes);
}
template <class... Params>
void allow_shared_bytes(void (*kernel)(Params...), std::size_t bytes, const char* name) {
    const cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
    if (err != cudaSuccess)
        throw ::attn::Error(std::string("letting ") + name + " use " + std::to_string(bytes) + " bytes of shared memory failed: " +
                            cudaGetErrorString(err));
}
}  // namespace attn::gpu
#else
#include <cstring>
#include <vector>

namespace attn::gpu {
// CUDA Graphs on the emulator: while a recording is open, launches, products and fills are kept as closures (each
// counted once, where it is recorded, as a GPU counts a captured launch), and launch_graph runs them in order.
struct EmulatedGraph {
    std::vector<std::function<void()>> work;
};
using GraphHandle = EmulatedGraph*;
inline EmulatedGraph*& open_recording() {
    static EmulatedGraph* recording = nullptr;
    return recording;
}
inline bool capturing() { return open_recording() != nullptr; }
inline void run_or_record(std::function<void()> work) {
    if (capturing()) open_recording()->work.push_back(std::move(work));
    else work();
}
template <class Kernel, class... Args>
void launch(const char* name, Kernel kernel, dim3 grid, dim3 block, std::size_t shared_bytes, Args... args) {
    ++device_work().kernels;
    run_or_record([=] { cuda_on_cpu::run_kernel(name, kernel, grid, block, shared_bytes, args...); });
}
template <class Kernel, class... Args>
void launch(Kernel kernel, dim3 grid, dim3 block, std::size_t shared_bytes, Args... args) {
    launch("(a kernel launched without a name)", kernel, grid, block, shared_bytes, args...);
}
inline void* allocate_device(std::size_t bytes, const std::string& what, const char*) {
    if (capturing()) refuse_in_capture("allocating " + what);  // a recording keeps pointers: its buffers exist before it
    ++device_work().allocations;
    return cuda_on_cpu::allocate(bytes, what);  // between guard pages, every byte 0xFF: unwritten floats read NaN
}
inline void free_device(void* device) noexcept { cuda_on_cpu::release(device); }
inline void copy_to_device(void* device, const void* host, std::size_t bytes, const char* what) {
    if (capturing()) refuse_in_capture(std::string("copying ") + what + " to the device");
    ++device_work().copies_to_device;
    std::memcpy(device, host, bytes);
}
inline void copy_to_host(void* host, const void* device, std::size_t bytes, const char* what) {
    if (capturing()) refuse_in_capture(std::string("copying ") + what + " to the host");
    ++device_work().copies_to_host;
    std::memcpy(host, device, bytes);
}
inline void fill_device_bytes(void* device, int byte, std::size_t bytes, const char*) {
    ++device_work().fills;
    run_or_record([=] { std::memset(device, byte, bytes); });
}
inline void sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* A, int lda, const float* B, int ldb,
                  float beta, float* C, int ldc) {
    ++device_work().blas_calls;
    run_or_record([=] { cuda_on_cpu::column_major_sgemm(trans_a, trans_b, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc); });
}
inline void sgemm_strided_batched(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* A, int lda,
                                  long long stride_a, const float* B, int ldb, long long stride_b, float beta, float* C, int ldc,
                                  long long stride_c, int batch) {
    ++device_work().blas_calls;
    run_or_record([=] {
        for (int i = 0; i < batch; ++i)
            cuda_on_cpu::column_major_sgemm(trans_a, trans_b, m, n, k, alpha, A + i * stride_a, lda, B + i * stride_b, ldb, beta,
                                            C + i * stride_c, ldc);
    });
}
inline void set_blas_tf32(bool on) { cuda_on_cpu::set_tf32(on); }
inline void synchronize_device() {  // else every emulated launch has finished
    if (capturing()) refuse_in_capture("waiting for the device");
}
inline void begin_capture() {
    if (capturing()) refuse_in_capture("beginning a capture");
    open_recording() = new EmulatedGraph;
}
inline void abort_capture() noexcept {
    delete open_recording();
    open_recording() = nullptr;
}
inline GraphHandle end_capture() {
    EmulatedGraph* graph = open_recording();
    open_recording() = nullptr;
    return graph;
}
inline void launch_graph(GraphHandle graph) {
    ++device_work().graphs;
    for (const auto& work : graph->work) work();
}
inline void destroy_graph(GraphHandle graph) noexcept { delete graph; }
inline double time_device_ms(const std::function<void()>& work) {
    const auto start = std::chrono::steady_clock::now();
    work();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}
inline std::size_t shared_bytes_per_block() { return cuda_on_cpu::shared_bytes_per_block(); }
template <class Kernel>
void allow_shared_bytes(Kernel, std::size_t bytes, const char* name) {  // as cudaFuncSetAttribute answers past the limit
    if (bytes > shared_bytes_per_block())
        throw ::attn::Error(std::string("letting ") + name + " use " + std::to_string(bytes) +
                            " bytes of shared memory failed: invalid argument (the emulated card allows a block " +
                            std::to_string(shared_bytes_per_block()) + ")");
}
}  // namespace attn::gpu
#endif
