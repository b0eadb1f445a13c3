// Bytes as lowercase hexadecimal text and back, for handles that travel in JSON (a pool's pointer
// export data, a fabric handle).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace cumemctl::ipc {

// "00ff..." for `n` bytes at `data`.
std::string to_hex(const unsigned char* data, std::size_t n);

// Fills `n` bytes at `data` from `hex`; throws Error (failed) when it is not 2n hexadecimal digits.
void from_hex(std::string_view hex, unsigned char* data, std::size_t n);

}  // namespace cumemctl::ipc
