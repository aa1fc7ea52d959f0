// Your answers to the exercises of Definition 9.1. Each body is a stub that throws; replace it.
#include "02_soft_lookup/soft_lookup.hpp"

#include <cmath>

#include "attn/error.hpp"

namespace ex {

Vec stable_softmax(const Vec& s) {
    (void)s;
    attn::not_implemented("2.1", "stable_softmax", "subtract the max, exponentiate, divide by the sum");
}

Vec attention_row(const Vec& q, const Mat& k, const Mat& v) {
    (void)q, (void)k, (void)v;
    attn::not_implemented("2.2", "attention_row", "scores q·k_j/sqrt(d_k), softmax, weighted sum of the v_j");
}

Mat attention(const Mat& q, const Mat& k, const Mat& v) {
    (void)q, (void)k, (void)v;
    attn::not_implemented("2.3", "attention", "softmax(Q K^T / sqrt(d_k)) V, with shape checks");
}

}  // namespace ex
