// The .npy reader and writer (core/npy.hpp): round trips bit for bit, agreement with files NumPy wrote
// (tests/golden/npy_*.npy, from tools/make_goldens.py), and every refusal naming the file and the problem.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>

#include "../spec.hpp"
#include "core/error.hpp"
#include "core/npy.hpp"
#include "core/rng.hpp"

using namespace attn;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

const std::string kGolden = ATTN_GOLDEN_DIR;

// A fresh directory under the system's temp directory, removed with everything in it at scope exit.
struct TempDir {
    fs::path path;
    TempDir() {
        std::random_device rd;
        path = fs::temp_directory_path() / ("attn_npy_test_" + std::to_string(rd()) + std::to_string(rd()));
        fs::create_directories(path);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
    std::string operator/(const std::string& name) const { return (path / name).string(); }
};

std::string read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

using spec::same_bits;

// The message of the Error that f throws; fails the test if it throws nothing or something else.
template <class F>
std::string error_of(F&& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    FAIL("no attn::Error was thrown");
    return {};
}

}  // namespace

TEST_CASE("write_npy then read_npy gives back Vec, Mat and Tensor3 bit for bit", "[npy]") {
    TempDir dir;
    Rng rng(3);
    Mat m = rng.normal_mat(7, 5);
    // entries a decimal or double round trip could change: −0, a subnormal, ±∞, NaN, the largest float
    m(0, 0) = -0.0f;
    m(0, 1) = std::numeric_limits<float>::denorm_min();
    m(0, 2) = std::numeric_limits<float>::infinity();
    m(0, 3) = -std::numeric_limits<float>::infinity();
    m(0, 4) = std::numeric_limits<float>::quiet_NaN();
    m(1, 0) = std::numeric_limits<float>::max();
    m(1, 1) = 1.0f + std::numeric_limits<float>::epsilon();
    write_npy(dir / "m.npy", m);
    CHECK(same_bits(read_npy_mat(dir / "m.npy"), m));
    CHECK(same_bits(read_npy_mat(dir / "m.npy", 7, 5), m));

    Vec v = Vec::from_shape({11});
    for (std::size_t i = 0; i < 11; ++i) v(i) = static_cast<float>(i) * 0.1f - 0.3f;
    write_npy(dir / "v.npy", v);
    CHECK(same_bits(read_npy_vec(dir / "v.npy", 11), v));

    Tensor3 t = Tensor3::from_shape({2, 3, 4});
    for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = static_cast<float>(rng.normal());
    write_npy(dir / "t.npy", t);
    const Tensor3 back = read_npy_tensor3(dir / "t.npy", 2, 3, 4);
    CHECK(same_bits(back, t));
    CHECK(back(1, 2, 3) == t(1, 2, 3));  // the last entry: C order, not transposed

    // an empty array is a valid file too
    write_npy(dir / "empty.npy", Mat::from_shape({0, 3}));
    const NpyArray e = read_npy(dir / "empty.npy");
    CHECK(e.shape == std::vector<std::size_t>{0, 3});
    CHECK(e.data.empty());
}

TEST_CASE("read_npy reads a file NumPy wrote, and write_npy writes NumPy's bytes exactly", "[npy]") {
    const std::string path = kGolden + "/npy_c_order_f4.npy";  // np.arange(6, dtype='<f4').reshape(2, 3)·0.5 − 1
    const Mat m = read_npy_mat(path, 2, 3);
    const float expected[2][3] = {{-1.0f, -0.5f, 0.0f}, {0.5f, 1.0f, 1.5f}};
    for (std::size_t i = 0; i < 2; ++i)
        for (std::size_t j = 0; j < 3; ++j) {
            INFO("entry (" << i << ", " << j << ")");
            CHECK(m(i, j) == expected[i][j]);
        }
    // Same array, our writer: the header (its dict, its padding to 64 bytes) and the data match np.save's.
    TempDir dir;
    write_npy(dir / "ours.npy", m);
    const std::string ours = read_bytes(dir / "ours.npy"), numpy = read_bytes(path);
    std::size_t first_difference = 0;
    const std::size_t common = std::min(ours.size(), numpy.size());
    while (first_difference < common && ours[first_difference] == numpy[first_difference]) ++first_difference;
    INFO("our header: " << ours.substr(10, ours.find('}') - 9) << "\nnumpy's:    " << numpy.substr(10, numpy.find('}') - 9));
    CHECK(ours.size() == numpy.size());
    CHECK(first_difference == numpy.size());  // byte for byte
    // The generic reader sees the same shape and data.
    const NpyArray a = read_npy(path);
    CHECK(a.shape == std::vector<std::size_t>{2, 3});
    CHECK(a.data == std::vector<float>{-1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f});
}

TEST_CASE("read_npy refuses a missing file, a directory and a file that is not .npy, naming the file", "[npy]") {
    TempDir dir;
    const std::string missing = dir / "no_such.npy";
    std::string msg = error_of([&] { read_npy(missing); });
    CHECK_THAT(msg, Contains("read_npy") && Contains("'" + missing + "'") && Contains("no such file"));

    msg = error_of([&] { read_npy_mat(dir.path.string()); });
    CHECK_THAT(msg, Contains("'" + dir.path.string() + "'") && Contains("is a directory"));

    const std::string text = dir / "text.npy";
    write_bytes(text, "x,y\n1,2\n");
    msg = error_of([&] { read_npy_mat(text); });
    CHECK_THAT(msg, Contains("'" + text + "'") && Contains("is not an .npy file"));

    write_bytes(text, "");  // an empty file
    CHECK_THAT(error_of([&] { read_npy(text); }), Contains("is not an .npy file"));

    // The magic, then a header length beyond the end of the file.
    write_bytes(text, std::string("\x93NUMPY\x01\x00\xff\x00{'descr'", 17));
    CHECK_THAT(error_of([&] { read_npy(text); }), Contains("is not an .npy file") && Contains("header claims 255 bytes"));

    // An unknown format version.
    std::string bytes = read_bytes(kGolden + "/npy_c_order_f4.npy");
    bytes[6] = '\x07';
    write_bytes(text, bytes);
    CHECK_THAT(error_of([&] { read_npy(text); }), Contains("format version 7.0"));
}

TEST_CASE("read_npy refuses every dtype but '<f4' and says which it found", "[npy]") {
    const std::string f8 = kGolden + "/npy_f8.npy";  // NumPy's float64
    CHECK_THAT(error_of([&] { read_npy_mat(f8); }),
               Contains("'" + f8 + "'") && Contains("dtype '<f8'") && Contains("only '<f4'"));

    // Big-endian float32 and int32: the same header with another descr of the same length.
    TempDir dir;
    const std::string good = read_bytes(kGolden + "/npy_c_order_f4.npy");
    for (const std::string descr : {">f4", "<i4", "<f2"}) {
        std::string bytes = good;
        const std::size_t at = bytes.find("<f4");
        REQUIRE(at != std::string::npos);
        bytes.replace(at, 3, descr);
        const std::string path = dir / "other.npy";
        write_bytes(path, bytes);
        INFO("descr " << descr);
        CHECK_THAT(error_of([&] { read_npy(path); }), Contains("'" + path + "'") && Contains("dtype '" + descr + "'"));
    }
}

TEST_CASE("read_npy refuses fortran order and a data size that does not match the shape", "[npy]") {
    const std::string fortran = kGolden + "/npy_fortran_f4.npy";  // np.asfortranarray of the (2, 3) array
    CHECK_THAT(error_of([&] { read_npy_mat(fortran); }), Contains("'" + fortran + "'") && Contains("fortran_order True"));

    TempDir dir;
    const std::string good = read_bytes(kGolden + "/npy_c_order_f4.npy");
    const std::string path = dir / "cut.npy";
    write_bytes(path, good.substr(0, good.size() - 4));  // one float short
    CHECK_THAT(error_of([&] { read_npy(path); }),
               Contains("'" + path + "'") && Contains("holds 20 data bytes") && Contains("needs 24"));
    write_bytes(path, good + "xxxx");  // one float too many
    CHECK_THAT(error_of([&] { read_npy(path); }), Contains("holds 28 data bytes"));
}

TEST_CASE("the typed readers check rank and shape, naming both", "[npy]") {
    const std::string path = kGolden + "/npy_c_order_f4.npy";  // (2, 3)
    CHECK_THAT(error_of([&] { read_npy_vec(path); }),
               Contains("'" + path + "'") && Contains("has rank 2 (shape (2, 3)), expected rank 1"));
    CHECK_THAT(error_of([&] { read_npy_tensor3(path); }), Contains("expected rank 3"));
    CHECK_THAT(error_of([&] { read_npy_mat(path, 3, 2); }),
               Contains("'" + path + "'") && Contains("has shape (2, 3), expected (3, 2)"));
    CHECK_THAT(error_of([&] { read_npy_mat(path, 2, 4); }), Contains("expected (2, 4)"));
    CHECK_NOTHROW(read_npy_mat(path, 2, 3));

    TempDir dir;
    write_npy(dir / "v.npy", Vec(xt::zeros<float>({4})));
    CHECK_THAT(error_of([&] { read_npy_vec(dir / "v.npy", 5); }), Contains("has shape (4,), expected (5,)"));
    CHECK_THAT(error_of([&] { read_npy_mat(dir / "v.npy"); }), Contains("has rank 1 (shape (4,)), expected rank 2"));
    write_npy(dir / "t.npy", Tensor3(xt::zeros<float>({2, 1, 3})));
    CHECK_THAT(error_of([&] { read_npy_tensor3(dir / "t.npy", 2, 3, 1); }), Contains("has shape (2, 1, 3), expected (2, 3, 1)"));
}

TEST_CASE("write_npy(dir, name, m) creates the directory and adds .npy — write errors name the path", "[npy]") {
    TempDir dir;
    Rng rng(4);
    const Mat m = rng.normal_mat(3, 4);
    const std::string nested = dir / "dump/block0";
    const std::string path = write_npy(nested, "q", m);
    CHECK(path == (fs::path(nested) / "q.npy").string());
    CHECK(fs::is_regular_file(path));
    CHECK(same_bits(read_npy_mat(path, 3, 4), m));
    CHECK(write_npy(nested, "k.npy", m) == (fs::path(nested) / "k.npy").string());  // not k.npy.npy
    CHECK(fs::is_regular_file(fs::path(nested) / "k.npy"));

    // The directory cannot be made: a file stands where it should be.
    write_bytes(dir / "plain_file", "x");
    CHECK_THAT(error_of([&] { write_npy(dir / "plain_file", "q", m); }),
               Contains("write_npy") && Contains("cannot create the directory '" + (dir / "plain_file") + "'"));
    // The plain writer does not create directories.
    const std::string nowhere = dir / "missing_dir/x.npy";
    CHECK_THAT(error_of([&] { write_npy(nowhere, m); }), Contains("cannot open '" + nowhere + "' for writing"));
    CHECK_THAT(error_of([&] { write_npy(nested, "", m); }), Contains("empty file name"));
}
