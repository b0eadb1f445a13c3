// libFuzzer target: parse_nvidia_params over arbitrary text. It must return values in their ranges or
// throw the /proc file Error; never crash, hang or throw anything else. Parsing is also insensitive
// to a trailing newline.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_checks.hpp"
#include "imex/nvidia_params.hpp"

namespace {

bool same(const cumemctl::imex::NvidiaParams& a, const cumemctl::imex::NvidiaParams& b) {
    return a.imex_channel_count == b.imex_channel_count && a.create_imex_channel0 == b.create_imex_channel0 &&
           a.device_file_mode == b.device_file_mode && a.device_file_uid == b.device_file_uid &&
           a.device_file_gid == b.device_file_gid;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        const cumemctl::imex::NvidiaParams p = cumemctl::imex::parse_nvidia_params(text, fuzz::kSource);
        fuzz::require(p.imex_channel_count.value_or(0) <= cumemctl::imex::kMaxImexChannelCount);
        fuzz::require(p.device_file_mode.value_or(0) <= 07777);
        fuzz::require(p.device_file_uid.value_or(0) != 0xffffffffU);
        fuzz::require(p.device_file_gid.value_or(0) != 0xffffffffU);
        fuzz::require(same(p, cumemctl::imex::parse_nvidia_params(text + "\n", fuzz::kSource)));
    } catch (const cumemctl::Error& e) {
        fuzz::check_error(e);
    }
    return 0;
}
