// Your answers to the exercises of Definition 9.1. Each body is a stub that throws; replace it.
#include "02_soft_lookup/soft_lookup.hpp"

#include <cmath>

#include "core/error.hpp"

namespace ex {

Vec stable_softmax(const Vec& s) {
    (void)s;
    attn::not_implemented("2.1", "stable_softmax", "a softmax that does not overflow (see the hints in soft_lookup.hpp)");
}

Vec attention_row(const Vec& q, const Mat& k, const Mat& v) {
    (void)q, (void)k, (void)v;
    attn::not_implemented("2.2", "attention_row", "one query against the keys and values (see soft_lookup.hpp)");
}

Mat attention(const Mat& q, const Mat& k, const Mat& v) {
    (void)q, (void)k, (void)v;
    attn::not_implemented("2.3", "attention", "Definition 9.1 for every row of q, with shape checks");
}

}  // namespace ex
