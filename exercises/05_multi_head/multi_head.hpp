// Exercises for Section 9.3, "Attention nhiều đầu": multi-head attention. Write the bodies in
// multi_head.cpp beside this file; check with `tools/progress.sh` or `./build/bin/exercise_tests "[sec05]"`.
#pragma once

#include <cstddef>
#include <vector>

#include "core/tensor.hpp"

namespace ex {

using attn::Mat;

/// Exercise 5.1 — split_heads
/// Split x (T, d_model) into n_heads matrices of shape (T, d_head), d_head = d_model / n_heads:
/// head h holds the columns [h·d_head, (h+1)·d_head) of every row. Throw attn::Error when n_heads is 0
/// or d_model is not divisible by n_heads.
/// Hint 1: the split is along the feature axis, not the positions: every head sees all T positions.
/// Hint 2: head h, row t, column j is x(t, h·d_head + j): contiguous blocks of columns, not every n_heads-th.
/// [vi]
/// Tách x (T, d_model) thành n_heads ma trận kích thước (T, d_head), d_head = d_model / n_heads:
/// đầu h giữ các cột [h·d_head, (h+1)·d_head) của mọi hàng. Ném attn::Error khi n_heads bằng 0 hoặc d_model không
/// chia hết cho n_heads.
/// Gợi ý 1: tách theo trục đặc trưng, không theo vị trí: mỗi đầu thấy đủ T vị trí.
/// Gợi ý 2: đầu h, hàng t, cột j là x(t, h·d_head + j): các khối cột liền nhau, không phải cứ n_heads cột lấy một.
std::vector<Mat> split_heads(const Mat& x, std::size_t n_heads);

/// Exercise 5.2 — merge_heads
/// The inverse: concatenate the heads' (T, d_head) outputs side by side into (T, n_heads·d_head),
/// head 0's columns first. merge_heads(split_heads(x, h)) == x. Throw attn::Error, naming the shapes, when
/// there is no head or the heads differ in shape.
/// Hint 1: undo split_heads: the heads sit side by side, in order.
/// Hint 2: column j of head h lands in column h·d_head + j.
/// [vi]
/// Phép ngược lại: ghép đầu ra (T, d_head) của các đầu cạnh nhau thành (T, n_heads·d_head), các cột của
/// đầu 0 đứng trước. merge_heads(split_heads(x, h)) == x. Ném attn::Error, nêu tên các kích thước, khi không
/// có đầu nào hoặc các đầu khác kích thước nhau.
/// Gợi ý 1: hoàn tác split_heads: các đầu nằm cạnh nhau, theo thứ tự.
/// Gợi ý 2: cột j của đầu h nằm ở cột h·d_head + j.
Mat merge_heads(const std::vector<Mat>& heads);

/// Exercise 5.3 — attention_param_count
/// The number of parameters in W_q, W_k, W_v, W_o of a multi-head attention layer of width d_model
/// (each d_model × d_model), plus a bias of d_model for each of the four with Biases::included.
/// It does not depend on n_heads: that is the point. d_model = 512 gives 1,048,576 without biases.
/// n_heads must be at least 1 and divide d_model (the heads split its columns): otherwise throw attn::Error.
/// Hint 1: count one head's share of W_q, W_k, W_v, then multiply by n_heads; W_o is one more matrix.
/// Hint 2: each head's W_q is d_model × d_head, and there are n_heads of them: n_heads · d_head = d_model.
/// [vi]
/// Số tham số trong W_q, W_k, W_v, W_o của một lớp attention nhiều đầu có độ rộng d_model (mỗi ma trận
/// d_model × d_model), cộng thêm một bias d_model cho mỗi ma trận trong bốn ma trận khi Biases::included.
/// Nó không phụ thuộc vào n_heads: đó chính là điểm mấu chốt. d_model = 512 cho 1,048,576 khi không có bias.
/// n_heads phải ít nhất là 1 và chia hết d_model (các đầu chia nhau các cột của nó): nếu không, ném attn::Error.
/// Gợi ý 1: đếm phần của một đầu trong W_q, W_k, W_v, rồi nhân với n_heads; W_o là thêm một ma trận.
/// Gợi ý 2: W_q của mỗi đầu là d_model × d_head, và có n_heads đầu: n_heads · d_head = d_model.
enum class Biases { none, included };
std::size_t attention_param_count(std::size_t d_model, std::size_t n_heads, Biases biases);

}  // namespace ex
