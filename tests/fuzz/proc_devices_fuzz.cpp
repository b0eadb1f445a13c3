// libFuzzer target: find_char_major over arbitrary text. It must return a major in range (one that the
// text lists by that very name) or throw the /proc file Error; never crash, hang or throw anything else.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_checks.hpp"
#include "imex/proc_devices.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        const std::optional<int> major =
            cumemctl::imex::find_char_major(text, cumemctl::imex::kImexChannelsDeviceName, fuzz::kSource);
        if (major) {
            fuzz::require(*major >= 0 && *major <= cumemctl::imex::kMaxMajor);
            fuzz::require(text.find(cumemctl::imex::kImexChannelsDeviceName) != std::string_view::npos);
            fuzz::require(text.find(std::to_string(*major)) != std::string_view::npos);
        }
    } catch (const cumemctl::Error& e) {
        fuzz::check_error(e);
    }
    return 0;
}
