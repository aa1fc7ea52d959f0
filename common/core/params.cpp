#include "core/params.hpp"

#include "core/error.hpp"

namespace attn {

Mat Parameters::filled(std::vector<std::size_t> shape, float value) const {
    Mat m = Mat::from_shape(shape);
    if (!shapes_only_) m.fill(value);  // shapes only: allocated, never written, so no page is touched
    return m;
}

Param& Parameters::add(std::string name, Mat init, bool decay) {
    for (const auto& p : params_) require(p.name != name, "Parameters::add", "duplicate parameter name '" + name + "'");
    Mat grad = filled({init.shape(0), init.shape(1)}, 0.0f);
    params_.push_back({std::move(name), std::move(init), std::move(grad), decay});
    return params_.back();
}

Param& Parameters::normal(std::string name, std::size_t rows, std::size_t cols, float std, Rng& rng) {
    if (shapes_only_) return add(std::move(name), filled({rows, cols}, 0.0f), true);
    Mat w = rng.normal_mat(rows, cols);
    w *= std;
    return add(std::move(name), std::move(w), true);
}

Param& Parameters::zeros(std::string name, std::size_t rows, std::size_t cols, bool decay) {
    return add(std::move(name), filled({rows, cols}, 0.0f), decay);
}

Param& Parameters::ones(std::string name, std::size_t rows, std::size_t cols) {
    return add(std::move(name), filled({rows, cols}, 1.0f), false);
}

void Parameters::zero_grad() {
    for (auto& p : params_) p.grad.fill(0.0f);
}

std::size_t Parameters::count() const {
    std::size_t n = 0;
    for (const auto& p : params_) n += p.value.size();
    return n;
}

std::size_t Parameters::count(const std::vector<std::string>& names) const {
    std::size_t n = 0;
    for (const auto& p : params_)
        for (const auto& name : names)
            if (p.name == name) n += p.value.size();
    return n;
}

Param& Parameters::operator[](const std::string& name) {
    for (auto& p : params_)
        if (p.name == name) return p;
    throw Error("Parameters: no parameter named '" + name + "'");
}

}  // namespace attn
