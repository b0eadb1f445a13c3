#include "ipc/hex.hpp"

#include "base/error.hpp"

namespace cumemctl::ipc {
namespace {

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

}  // namespace

std::string to_hex(const unsigned char* data, std::size_t n) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string s;
    s.reserve(2 * n);
    for (std::size_t i = 0; i < n; ++i) {
        s += kDigits[data[i] >> 4];
        s += kDigits[data[i] & 0xf];
    }
    return s;
}

void from_hex(std::string_view hex, unsigned char* data, std::size_t n) {
    if (hex.size() != 2 * n) throw Error(internal_error("malformed hexadecimal bytes in a message"));
    for (std::size_t i = 0; i < n; ++i) {
        const int hi = hex_digit(hex[2 * i]);
        const int lo = hex_digit(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) throw Error(internal_error("malformed hexadecimal bytes in a message"));
        data[i] = static_cast<unsigned char>(hi * 16 + lo);
    }
}

}  // namespace cumemctl::ipc
