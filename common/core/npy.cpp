// .npy reading and writing for fp32 tensors: a small parser of numpy.lib.format's header, written here
// rather than through xt::load_npy so that each refusal can name the file and what was found in it.
#include "core/npy.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/error.hpp"

namespace attn {

static_assert(std::endian::native == std::endian::little,
              "npy: '<f4' data is read and written as raw bytes, which assumes a little-endian machine");

namespace {

constexpr char kMagic[] = "\x93NUMPY";  // 6 bytes, then the major and minor version
constexpr std::size_t kMagicLen = 6;

std::string quoted(const std::string& path) { return "'" + path + "'"; }

std::string shape_to_string(const std::vector<std::size_t>& shape) {  // Python's tuple repr: (), (3,), (2, 3)
    std::string s = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        s += std::to_string(shape[i]);
        if (shape.size() == 1) s += ",";
        if (i + 1 < shape.size()) s += ", ";
    }
    return s + ")";
}

// The value after 'key': in the header dict, up to (not including) the next top-level comma or '}'.
// Returns false when the key is absent.
bool dict_value(const std::string& header, const std::string& key, std::string& value) {
    std::size_t at = header.find("'" + key + "'");
    if (at == std::string::npos) at = header.find("\"" + key + "\"");
    if (at == std::string::npos) return false;
    const std::size_t colon = header.find(':', at + key.size() + 2);
    if (colon == std::string::npos) return false;
    std::size_t i = colon + 1;
    while (i < header.size() && header[i] == ' ') ++i;
    std::size_t end = i;
    if (end < header.size() && header[end] == '(') {
        end = header.find(')', end);
        if (end == std::string::npos) return false;
        ++end;
    } else {
        while (end < header.size() && header[end] != ',' && header[end] != '}') ++end;
    }
    value = header.substr(i, end - i);
    while (!value.empty() && value.back() == ' ') value.pop_back();
    return true;
}

std::string unquote(const std::string& s) {
    if (s.size() >= 2 && (s.front() == '\'' || s.front() == '"') && s.back() == s.front()) return s.substr(1, s.size() - 2);
    return s;
}

// "(2, 5, 16)" or "(16,)" or "()" → {2, 5, 16}, {16}, {}
bool parse_shape(const std::string& s, std::vector<std::size_t>& shape) {
    if (s.size() < 2 || s.front() != '(' || s.back() != ')') return false;
    shape.clear();
    std::size_t i = 1;
    while (i + 1 < s.size()) {
        while (i + 1 < s.size() && (s[i] == ' ' || s[i] == ',')) ++i;
        if (i + 1 >= s.size()) break;
        std::size_t n = 0, digits = 0;
        while (i + 1 < s.size() && s[i] >= '0' && s[i] <= '9') n = n * 10 + static_cast<std::size_t>(s[i++] - '0'), ++digits;
        if (digits == 0) return false;  // e.g. "(2, -1)" or "(2, x)"
        shape.push_back(n);
    }
    return true;
}

std::size_t product(const std::vector<std::size_t>& shape) {
    std::size_t n = 1;
    for (std::size_t s : shape) n *= s;
    return n;
}

void require_shape(const std::vector<std::size_t>& shape, const std::vector<std::size_t>& expected, const std::string& path) {
    require(shape == expected, "read_npy",
            quoted(path) + " has shape " + shape_to_string(shape) + ", expected " + shape_to_string(expected));
}

void require_rank(const NpyArray& a, std::size_t rank, const std::string& path) {
    require(a.shape.size() == rank, "read_npy",
            quoted(path) + " has rank " + std::to_string(a.shape.size()) + " (shape " + shape_to_string(a.shape) +
                "), expected rank " + std::to_string(rank));
}

void write_raw(const std::string& path, const std::vector<std::size_t>& shape, const float* data) {
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape_to_string(shape) + ", }";
    // NumPy pads the header with spaces and a final newline so that the data starts at a multiple of 64.
    const std::size_t preamble = kMagicLen + 2 + 2;  // magic, version, uint16 header length
    const std::size_t total = (preamble + header.size() + 1 + 63) / 64 * 64;
    header.append(total - preamble - header.size() - 1, ' ');
    header += '\n';
    require(header.size() <= 0xffff, "write_npy", quoted(path) + ": header too long for format 1.0");
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    require(out.good(), "write_npy", "cannot open " + quoted(path) + " for writing");
    const unsigned char len[2] = {static_cast<unsigned char>(header.size() & 0xff), static_cast<unsigned char>(header.size() >> 8)};
    out.write(kMagic, kMagicLen);
    out.put('\x01').put('\x00');
    out.write(reinterpret_cast<const char*>(len), 2);
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(product(shape) * sizeof(float)));
    out.close();
    require(!out.fail(), "write_npy", "writing " + quoted(path) + " failed (disk full?)");
}

}  // namespace

NpyArray read_npy(const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    require(fs::exists(path, ec), "read_npy", quoted(path) + ": no such file");
    require(!fs::is_directory(path, ec), "read_npy", quoted(path) + " is a directory, not an .npy file");
    std::ifstream in(path, std::ios::binary);
    require(in.good(), "read_npy", quoted(path) + " exists but cannot be opened for reading");
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());

    require(bytes.size() >= kMagicLen + 2 && std::memcmp(bytes.data(), kMagic, kMagicLen) == 0, "read_npy",
            quoted(path) + " is not an .npy file (it does not start with \"\\x93NUMPY\")");
    const auto byte = [&](std::size_t i) { return static_cast<std::size_t>(static_cast<unsigned char>(bytes[i])); };
    const std::size_t major = byte(kMagicLen);
    require(major >= 1 && major <= 3, "read_npy",
            quoted(path) + " has .npy format version " + std::to_string(major) + "." + std::to_string(byte(kMagicLen + 1)) +
                "; versions 1.0 to 3.0 are read");
    const std::size_t len_bytes = major == 1 ? 2 : 4;  // 2.0 and 3.0 have a uint32 header length
    const std::size_t len_at = kMagicLen + 2;
    require(bytes.size() >= len_at + len_bytes, "read_npy", quoted(path) + " is not an .npy file (truncated before its header)");
    std::size_t header_len = 0;
    for (std::size_t i = len_bytes; i-- > 0;) header_len = header_len * 256 + byte(len_at + i);
    const std::size_t data_at = len_at + len_bytes + header_len;
    require(bytes.size() >= data_at, "read_npy",
            quoted(path) + " is not an .npy file (its header claims " + std::to_string(header_len) + " bytes, the file has " +
                std::to_string(bytes.size() - len_at - len_bytes) + ")");
    const std::string header = bytes.substr(len_at + len_bytes, header_len);

    std::string descr, fortran, shape_s;
    require(dict_value(header, "descr", descr) && dict_value(header, "fortran_order", fortran) &&
                dict_value(header, "shape", shape_s),
            "read_npy", quoted(path) + " is not an .npy file (header without 'descr', 'fortran_order' and 'shape': " + header + ")");
    descr = unquote(descr);
    require(descr == "<f4", "read_npy",
            quoted(path) + " has dtype '" + descr + "'; only '<f4' (little-endian float32) is accepted");
    require(fortran == "False", "read_npy",
            quoted(path) + " has fortran_order " + fortran + "; only C order is accepted (save np.ascontiguousarray(a))");
    NpyArray a;
    require(parse_shape(shape_s, a.shape), "read_npy", quoted(path) + " has an unreadable shape " + shape_s);

    const std::size_t n = product(a.shape), have = bytes.size() - data_at;
    require(have == n * sizeof(float), "read_npy",
            quoted(path) + " holds " + std::to_string(have) + " data bytes; shape " + shape_to_string(a.shape) + " of '<f4' needs " +
                std::to_string(n * sizeof(float)));
    a.data.resize(n);
    if (n > 0) std::memcpy(a.data.data(), bytes.data() + data_at, n * sizeof(float));
    return a;
}

Vec read_npy_vec(const std::string& path) {
    NpyArray a = read_npy(path);
    require_rank(a, 1, path);
    Vec v = Vec::from_shape({a.shape[0]});
    std::copy(a.data.begin(), a.data.end(), v.begin());
    return v;
}

Mat read_npy_mat(const std::string& path) {
    NpyArray a = read_npy(path);
    require_rank(a, 2, path);
    Mat m = Mat::from_shape({a.shape[0], a.shape[1]});
    std::copy(a.data.begin(), a.data.end(), m.begin());
    return m;
}

Tensor3 read_npy_tensor3(const std::string& path) {
    NpyArray a = read_npy(path);
    require_rank(a, 3, path);
    Tensor3 t = Tensor3::from_shape({a.shape[0], a.shape[1], a.shape[2]});
    std::copy(a.data.begin(), a.data.end(), t.begin());
    return t;
}

Vec read_npy_vec(const std::string& path, std::size_t n) {
    Vec v = read_npy_vec(path);
    require_shape({v.shape(0)}, {n}, path);
    return v;
}

Mat read_npy_mat(const std::string& path, std::size_t rows, std::size_t cols) {
    Mat m = read_npy_mat(path);
    require_shape({m.shape(0), m.shape(1)}, {rows, cols}, path);
    return m;
}

Tensor3 read_npy_tensor3(const std::string& path, std::size_t n0, std::size_t n1, std::size_t n2) {
    Tensor3 t = read_npy_tensor3(path);
    require_shape({t.shape(0), t.shape(1), t.shape(2)}, {n0, n1, n2}, path);
    return t;
}

void write_npy(const std::string& path, const Vec& v) { write_raw(path, {v.shape(0)}, v.data()); }
void write_npy(const std::string& path, const Mat& m) { write_raw(path, {m.shape(0), m.shape(1)}, m.data()); }
void write_npy(const std::string& path, const Tensor3& t) { write_raw(path, {t.shape(0), t.shape(1), t.shape(2)}, t.data()); }

std::string write_npy(const std::string& dir, const std::string& name, const Mat& m) {
    namespace fs = std::filesystem;
    require(!name.empty(), "write_npy", "empty file name for a " + shape_str(m) + " array in " + quoted(dir));
    std::error_code ec;
    fs::create_directories(dir, ec);
    require(!ec && fs::is_directory(dir), "write_npy",
            "cannot create the directory " + quoted(dir) + (ec ? " (" + ec.message() + ")" : " (a file of that name exists)"));
    const bool has_ext = name.size() >= 4 && name.compare(name.size() - 4, 4, ".npy") == 0;
    const std::string path = (fs::path(dir) / (has_ext ? name : name + ".npy")).string();
    write_npy(path, m);
    return path;
}

}  // namespace attn
