// NumPy's .npy files, fp32 only: how tensors leave and enter the library. The tests read PyTorch's
// outputs from tests/golden/ (claim C32, written by tools/make_goldens.py), programs dump their
// activations for a reader in Python (`10_block --dump DIR`), and the GPU code compares against them.
//
// The format (numpy.lib.format, versions 1.0–3.0): the magic "\x93NUMPY", a version, a header length,
// then a Python dict such as {'descr': '<f4', 'fortran_order': False, 'shape': (2, 5, 16), } and the
// raw data. Only '<f4' (little-endian float32) in C order is accepted: anything else is refused by
// name rather than converted, so that a golden file saved as float64 is noticed, not silently rounded.
// Every error names the file and the problem, e.g.
//     read_npy: 'tests/golden/x.npy' has dtype '<f8'; only '<f4' (little-endian float32) is accepted
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace attn {

// One array as read from a file: its shape (rank 0 to any) and its entries in C order.
struct NpyArray {
    std::vector<std::size_t> shape;
    std::vector<float> data;  // prod(shape) entries
};

// Reads any rank. Throws Error on a missing file, a file that is not .npy, a dtype other than '<f4',
// fortran order, or fewer or more data bytes than the shape needs.
NpyArray read_npy(const std::string& path);

// Reads and checks the rank: 1 for Vec, 2 for Mat, 3 for Tensor3.
Vec read_npy_vec(const std::string& path);
Mat read_npy_mat(const std::string& path);
Tensor3 read_npy_tensor3(const std::string& path);
// Also checks the shape, e.g. read_npy_mat(path, {2 * 5, 16}): "… has shape (10, 8), expected (10, 16)".
Vec read_npy_vec(const std::string& path, std::size_t n);
Mat read_npy_mat(const std::string& path, std::size_t rows, std::size_t cols);
Tensor3 read_npy_tensor3(const std::string& path, std::size_t n0, std::size_t n1, std::size_t n2);

// Writes '<f4', C order, format version 1.0 (what np.save writes for these arrays). Throws Error if
// the file cannot be written; the directory must exist.
void write_npy(const std::string& path, const Vec& v);
void write_npy(const std::string& path, const Mat& m);
void write_npy(const std::string& path, const Tensor3& t);

// Writes DIR/NAME.npy (".npy" added unless NAME ends with it), creating DIR and its parents first.
// Returns the path written. E.g. write_npy("dump", "block0_q", q) → "dump/block0_q.npy".
std::string write_npy(const std::string& dir, const std::string& name, const Mat& m);

}  // namespace attn
