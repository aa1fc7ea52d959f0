// The layers' training operations on the device (train_layers.hpp): argument checks, launch shapes, and the
// host's share of the deterministic sums (Σ x² and the mean loss add the device's partial results in a fixed
// order on the host). The kernels are in train_layer_kernels.cuh. Written once for two machines
// (kernel_launch.cuh): tests/common/gpu_train_layers_on_cpu.cpp compiles this very file on the CPU emulator.
#include <algorithm>
#include <string>
#include <vector>

#include "buffer.hpp"
#include "kernel_launch.cuh"
#include "launch.hpp"
#include "ops.hpp"
#include "train_layer_kernels.cuh"
#include "train_layers.hpp"

namespace attn::gpu {

namespace {
std::string shape(long long rows, long long cols) { return "(" + std::to_string(rows) + ", " + std::to_string(cols) + ")"; }
unsigned elementwise_grid(std::size_t n) { return static_cast<unsigned>(elementwise_blocks(n)); }

// sum (1, cols) += Σ_rows dy (and sum_xhat += Σ_rows dy · x̂ where given): one pass up to a chunk of rows, else
// chunked into the caller's scratch (grown, never shrunk; null: one for this call) and combined.
void column_sums(const float* dy, long long rows, long long cols, float* sum, float* sum_xhat, const float* x, const float* mean,
                 const float* rstd, DeviceBuffer* scratch) {
    const long long chunks = column_sum_chunks(rows);
    if (chunks > 65535)  // a grid's y dimension
        throw Error("gpu::column_sums: " + std::to_string(rows) + " rows make " + std::to_string(chunks) +
                    " chunks of 256, past a grid's 65,535");
    const dim3 grid(static_cast<unsigned>(column_sum_blocks(cols)), static_cast<unsigned>(chunks));
    if (chunks == 1) {
        launch("column_sums_kernel", kernels::column_sums_kernel, grid, dim3(kColumnSumThreads), 0, dy, rows, cols, sum, sum_xhat, x,
               mean, rstd, rows, static_cast<float*>(nullptr), static_cast<float*>(nullptr));
        return;
    }
    DeviceBuffer own;
    if (scratch == nullptr) scratch = &own;
    const std::size_t need = static_cast<std::size_t>(2 * chunks * cols);
    if (scratch->size() < need) *scratch = DeviceBuffer(need, "column sums' chunk rows (scratch)");
    float* chunk_sum = scratch->data();
    float* chunk_sum_xhat = sum_xhat != nullptr ? scratch->data() + chunks * cols : nullptr;
    launch("column_sums_kernel", kernels::column_sums_kernel, grid, dim3(kColumnSumThreads), 0, dy, rows, cols, sum, sum_xhat, x,
           mean, rstd, kColumnSumChunk, chunk_sum, chunk_sum_xhat);
    launch("column_sums_combine_kernel", kernels::column_sums_combine_kernel, dim3(elementwise_grid(static_cast<std::size_t>(cols))),
           dim3(kElementwiseThreads), 0, static_cast<const float*>(chunk_sum), static_cast<const float*>(chunk_sum_xhat), chunks, cols,
           sum, sum_xhat);
}
}  // namespace

// --- LayerNorm ---------------------------------------------------------------------------------------------------
void layernorm_forward(const float* x, const float* gain, const float* bias, float* y, float* mean, float* rstd, int N, int d,
                       float eps) {
    require(N > 0 && d > 0, "gpu::layernorm_forward", "x " + shape(N, d) + " must have positive sizes");
    require(mean != nullptr && rstd != nullptr, "gpu::layernorm_forward", "mean and rstd (N) must be given");
    layernorm(x, gain, bias, y, N, d, eps, mean, rstd);  // ops.hpp's forward, keeping the row statistics
}

void layernorm_backward(const float* dy, const float* x, const float* gain, const float* mean, const float* rstd, float* dx,
                        float* dgain, float* dbias, int N, int d, DeviceBuffer* scratch) {
    require(N > 0 && d > 0, "gpu::layernorm_backward", "dy " + shape(N, d) + " must have positive sizes");
    require(dgain != nullptr && dbias != nullptr, "gpu::layernorm_backward", "dgain and dbias (1, d) must be given");
    launch("layernorm_backward_dx_kernel", kernels::layernorm_backward_dx_kernel,
           dim3(static_cast<unsigned>(layernorm_blocks(N))), dim3(kLayerNormThreads), 0, dy, x, gain, mean, rstd, dx, N, d);
    column_sums(dy, N, d, dbias, dgain, x, mean, rstd, scratch);
}

// --- elementwise ---------------------------------------------------------------------------------------------------
void gelu_backward(const float* x, const float* dy, float* dx, std::size_t n) {
    if (n == 0) return;
    launch("gelu_backward_kernel", kernels::gelu_backward_kernel, dim3(elementwise_grid(n)), dim3(kElementwiseThreads), 0, x, dy,
           dx, static_cast<long long>(n));
}

void bias_backward(const float* dy, float* dbias, int rows, int cols, DeviceBuffer* scratch) {
    require(rows > 0 && cols > 0, "gpu::bias_backward", "dy " + shape(rows, cols) + " must have positive sizes");
    column_sums(dy, rows, cols, dbias, nullptr, nullptr, nullptr, nullptr, scratch);
}

void add_inplace(float* y, const float* x, std::size_t n) {
    if (n == 0) return;
    launch("add_inplace_kernel", kernels::add_inplace_kernel, dim3(elementwise_grid(n)), dim3(kElementwiseThreads), 0, y, x,
           static_cast<long long>(n));
}

void scale_inplace(float* x, std::size_t n, float s) {
    if (n == 0) return;
    launch("scale_inplace_kernel", kernels::scale_inplace_kernel, dim3(elementwise_grid(n)), dim3(kElementwiseThreads), 0, x,
           static_cast<long long>(n), s);
}

double sum_squares(const float* x, std::size_t n) {
    if (n == 0) return 0.0;
    const long long blocks = sum_squares_blocks(n);
    DeviceBuffer sums(static_cast<std::size_t>(2 * blocks), "sum_squares' block sums (doubles)");  // 2 floats a double
    double* block_sums = reinterpret_cast<double*>(sums.data());
    launch("sum_squares_kernel", kernels::sum_squares_kernel, dim3(static_cast<unsigned>(blocks)), dim3(kSumSquaresThreads), 0, x,
           static_cast<long long>(n), block_sums);
    std::vector<double> host(static_cast<std::size_t>(blocks));
    copy_to_host(host.data(), block_sums, host.size() * sizeof(double), "sum_squares' block sums");
    double total = 0.0;
    for (double s : host) total += s;  // block order
    return total;
}

namespace {
// Each tensor's first block on the device, `blocks_of(n)` blocks a tensor, one tensor after another (tensors + 1
// entries, the last the grid's size); returns the grid's size.
template <class BlocksOf>
int upload_first_blocks(const std::vector<TensorGroup::Tensor>& tensors, BlocksOf blocks_of, DeviceInts& first) {
    std::vector<int> starts = {0};
    for (const TensorGroup::Tensor& t : tensors) {
        const long long next = starts.back() + blocks_of(t.n);
        if (next > 2147483647LL) throw Error("gpu::TensorGroup: the tensors need " + std::to_string(next) + " blocks, past a grid's 2^31 - 1");
        starts.push_back(static_cast<int>(next));
    }
    first = DeviceInts(starts.size(), "gpu::TensorGroup: each tensor's first block");
    first.upload(starts.data(), starts.size());
    return starts.back();
}
}  // namespace

TensorGroup::TensorGroup(const std::vector<Tensor>& tensors) {
    require(!tensors.empty(), "gpu::TensorGroup", "no tensors");
    std::vector<TensorSlot> slots;
    for (const Tensor& t : tensors)
        slots.push_back({.w = t.w, .g = t.g, .m = t.m, .v = t.v, .n = static_cast<long long>(t.n), .decay = t.decay ? 1 : 0, .pad = 0});
    tensors_ = static_cast<int>(slots.size());
    static_assert(sizeof(TensorSlot) % sizeof(float) == 0, "a slot is whole floats");
    slots_ = DeviceBuffer(slots.size() * sizeof(TensorSlot) / sizeof(float), "gpu::TensorGroup: the tensors' slots");
    slots_.upload(reinterpret_cast<const float*>(slots.data()), slots_.size());
    blocks_ = upload_first_blocks(tensors, [](std::size_t n) { return elementwise_blocks(n); }, first_);
    sum_blocks_ = upload_first_blocks(tensors, [](std::size_t n) { return sum_squares_blocks(n); }, sum_first_);
}

void TensorGroup::zero_grads() {
    launch("zero_grads_kernel", kernels::zero_grads_kernel, dim3(static_cast<unsigned>(blocks_)), dim3(kElementwiseThreads), 0,
           reinterpret_cast<const TensorSlot*>(slots_.data()), static_cast<const int*>(first_.data()), tensors_);
}

const float* TensorGroup::clip_factor(double clip) {
    if (scale_.size() == 0) {  // the scratch, once
        block_sums_ = DeviceBuffer(static_cast<std::size_t>(2 * sum_blocks_), "the clip's block sums (doubles)");  // 2 floats a double
        tensor_sums_ = DeviceBuffer(static_cast<std::size_t>(2 * tensors_), "the clip's tensor sums (doubles)");
        scale_ = DeviceBuffer(1, "the clipping factor (1)");
    }
    double* block_sums = reinterpret_cast<double*>(block_sums_.data());
    launch("sum_squares_many_kernel", kernels::sum_squares_many_kernel, dim3(static_cast<unsigned>(sum_blocks_)), dim3(kSumSquaresThreads),
           0, reinterpret_cast<const TensorSlot*>(slots_.data()), static_cast<const int*>(sum_first_.data()), tensors_, block_sums);
    launch("clip_scale_kernel", kernels::clip_scale_kernel, dim3(1), dim3(kClipScaleThreads), 0, static_cast<const double*>(block_sums),
           static_cast<const int*>(sum_first_.data()), tensors_, clip, reinterpret_cast<double*>(tensor_sums_.data()), scale_.data());
    return scale_.data();
}

void TensorGroup::adamw(float lr, float beta1, float beta2, float eps, float weight_decay, float bc1, float bc2, const float* grad_scale) {
    if (!(bc1 > 0.0f && bc2 > 0.0f))
        throw Error("gpu::TensorGroup::adamw: bias corrections bc1 = " + std::to_string(bc1) + ", bc2 = " + std::to_string(bc2) +
                    " must be positive (step ≥ 1)");
    launch("adamw_many_kernel", kernels::adamw_many_kernel, dim3(static_cast<unsigned>(blocks_)), dim3(kElementwiseThreads), 0,
           reinterpret_cast<const TensorSlot*>(slots_.data()), static_cast<const int*>(first_.data()), tensors_, lr, beta1, beta2, eps,
           weight_decay, bc1, bc2, grad_scale);
}

// --- embeddings ------------------------------------------------------------------------------------------------------
void embedding_forward(const int* tokens, const float* wte, const float* wpe, const float* table, float* x, int B, int T, int d,
                       int V) {
    require(B > 0 && T > 0 && d > 0 && V > 0, "gpu::embedding_forward",
            "B, T, d, V = " + std::to_string(B) + ", " + std::to_string(T) + ", " + std::to_string(d) + ", " + std::to_string(V) +
                " must be positive");
    const std::size_t n = static_cast<std::size_t>(B) * T * d;
    launch("embedding_forward_kernel", kernels::embedding_forward_kernel, dim3(elementwise_grid(n)), dim3(kElementwiseThreads), 0,
           tokens, wte, wpe, table, x, T, d, V, static_cast<long long>(n));
}

TokenGroups group_tokens(const std::vector<int>& tokens) {
    TokenGroups groups;
    group_tokens(tokens, groups);
    return groups;
}

void group_tokens(const std::vector<int>& tokens, TokenGroups& groups) {
    if (tokens.empty()) throw Error("gpu::group_tokens: no tokens");
    int max_token = 0;
    for (std::size_t n = 0; n < tokens.size(); ++n) {
        if (tokens[n] < 0)
            throw Error("gpu::group_tokens: token " + std::to_string(tokens[n]) + " at " + std::to_string(n) + " is negative");
        max_token = std::max(max_token, tokens[n]);
    }
    // A counting sort: count each token, then place the positions in ascending order within their token.
    std::vector<int> count(static_cast<std::size_t>(max_token) + 1, 0);
    for (int t : tokens) ++count[t];
    std::vector<int> token, start{0}, slot(count.size(), -1);
    for (std::size_t v = 0; v < count.size(); ++v)
        if (count[v] > 0) {
            slot[v] = start.back();
            token.push_back(static_cast<int>(v));
            start.push_back(start.back() + count[v]);
        }
    std::vector<int> position(tokens.size());
    for (std::size_t n = 0; n < tokens.size(); ++n) position[slot[tokens[n]]++] = static_cast<int>(n);
    // G ≤ N distinct tokens: buffers for N of them serve every batch of N tokens.
    const std::size_t N = tokens.size();
    if (groups.position.size() != N) {
        groups.token = DeviceInts(N, "the batch's distinct tokens (G ≤ N)");
        groups.start = DeviceInts(N + 1, "the token groups' starts (G + 1)");
        groups.position = DeviceInts(N, "the positions grouped by token (N)");
    }
    groups.groups = static_cast<int>(token.size());
    groups.token.upload(token.data(), token.size());
    groups.start.upload(start.data(), start.size());
    groups.position.upload(position.data(), position.size());
}

void embedding_backward(const TokenGroups& groups, const float* dx, float* dwte, float* dwpe, int B, int T, int d) {
    require(B > 0 && T > 0 && d > 0, "gpu::embedding_backward",
            "dx (B·T, d) = (" + std::to_string(B) + "·" + std::to_string(T) + ", " + std::to_string(d) + ") must have positive sizes");
    require(groups.groups > 0 && groups.position.size() == static_cast<std::size_t>(B) * T, "gpu::embedding_backward",
            "the token groups hold " + std::to_string(groups.position.size()) + " positions for B·T = " +
                std::to_string(static_cast<long long>(B) * T));
    launch("embedding_dwte_kernel", kernels::embedding_dwte_kernel, dim3(static_cast<unsigned>(groups.groups)),
           dim3(kEmbeddingThreads), 0, groups.token.data(), groups.start.data(), groups.position.data(), dx, dwte, d);
    if (dwpe == nullptr) return;
    const std::size_t Td = static_cast<std::size_t>(T) * d;
    launch("position_sums_kernel", kernels::position_sums_kernel, dim3(elementwise_grid(Td)), dim3(kElementwiseThreads), 0, dx,
           dwpe, B, static_cast<long long>(Td));
}

// --- cross-entropy ---------------------------------------------------------------------------------------------------
double cross_entropy(const float* logits, const int* targets, float* losses, float* dlogits, int N, int V, int counted) {
    require(N > 0 && V > 0, "gpu::cross_entropy", "logits " + shape(N, V) + " must have positive sizes");
    require(counted > 0 && counted <= N, "gpu::cross_entropy",
            "counted = " + std::to_string(counted) + " scored rows of N = " + std::to_string(N) + " (every target −1?)");
    DeviceBuffer own;
    if (losses == nullptr) {
        own = DeviceBuffer(static_cast<std::size_t>(N), "the losses (N)");
        losses = own.data();
    }
    cross_entropy_rows(logits, targets, losses, dlogits, N, V, counted);
    return mean_loss(losses, N, counted);
}

void cross_entropy_rows(const float* logits, const int* targets, float* losses, float* dlogits, int N, int V, int counted) {
    require(N > 0 && V > 0 && losses != nullptr, "gpu::cross_entropy_rows", "logits " + shape(N, V) + " must have positive sizes, and losses a buffer");
    require(counted > 0 && counted <= N, "gpu::cross_entropy_rows",
            "counted = " + std::to_string(counted) + " scored rows of N = " + std::to_string(N) + " (every target −1?)");
    launch("cross_entropy_kernel", kernels::cross_entropy_kernel, dim3(static_cast<unsigned>(N)), dim3(cross_entropy_threads(V)),
           0, logits, targets, losses, dlogits, V, 1.0f / static_cast<float>(counted));
}

double mean_loss(const float* losses, int N, int counted) {
    std::vector<float> host(static_cast<std::size_t>(N));
    copy_to_host(host.data(), losses, host.size() * sizeof(float), "cross_entropy's row losses");
    double total = 0.0;
    for (float l : host) total += l;  // row order
    return total / counted;
}

// --- RoPE ------------------------------------------------------------------------------------------------------------
void rope_rotate(float* x, const float* angles, int B, int T, int n_heads, int d_k, float sign) {
    require(B > 0 && T > 0 && n_heads > 0 && d_k > 0 && d_k % 2 == 0, "gpu::rope_rotate",
            "x (B·T, n_heads·d_k) = (" + std::to_string(B) + "·" + std::to_string(T) + ", " + std::to_string(n_heads) + "·" +
                std::to_string(d_k) + "): sizes must be positive and d_k even");
    require(sign == 1.0f || sign == -1.0f, "gpu::rope_rotate", "sign = " + std::to_string(sign) + " must be +1 or −1");
    const std::size_t pairs = static_cast<std::size_t>(B) * T * n_heads * (d_k / 2);
    launch("rope_rotate_kernel", kernels::rope_rotate_kernel, dim3(elementwise_grid(pairs)), dim3(kElementwiseThreads), 0, x,
           angles, T, n_heads, d_k, sign, static_cast<long long>(pairs));
}

// --- AdamW -----------------------------------------------------------------------------------------------------------
void adamw_update(float* w, const float* g, float* m, float* v, std::size_t n, float lr, float beta1, float beta2, float eps,
                  float decay, float bc1, float bc2, const float* grad_scale) {
    if (!(bc1 > 0.0f && bc2 > 0.0f))  // the message is built only when it is needed: this runs for every tensor of every step
        throw Error("gpu::adamw_update: bias corrections bc1 = " + std::to_string(bc1) + ", bc2 = " + std::to_string(bc2) +
                    " must be positive (step ≥ 1)");
    if (n == 0) return;
    launch("adamw_kernel", kernels::adamw_kernel, dim3(elementwise_grid(n)), dim3(kElementwiseThreads), 0, w, g, m, v,
           static_cast<long long>(n), lr, beta1, beta2, eps, decay, bc1, bc2, grad_scale);
}

}  // namespace attn::gpu
