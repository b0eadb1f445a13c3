// Reading /proc/driver/nvidia/params: the NVIDIA kernel module's parameters that imex-setup needs.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace cumemctl::imex {

// The channel count the driver uses when its params file does not say (NVIDIA's default).
inline constexpr std::uint32_t kDefaultImexChannelCount = 2048;

// The most channels a device number can address (20 minor bits).
inline constexpr std::uint32_t kMaxImexChannelCount = 1U << 20;

// The device-file mode the driver uses when its params file does not say.
inline constexpr std::uint32_t kDefaultDeviceFileMode = 0666;

// The parameters imex-setup reads; each nullopt when the file does not list it.
struct NvidiaParams {
    std::optional<std::uint32_t> imex_channel_count;  // ImexChannelCount: how many channel minors exist
    std::optional<bool> create_imex_channel0;         // CreateImexChannel0: the driver makes channel0 itself
    std::optional<std::uint32_t> device_file_mode;    // DeviceFileMode (decimal in the file, e.g. 438 = 0666)
    std::optional<std::uint32_t> device_file_uid;     // DeviceFileUID
    std::optional<std::uint32_t> device_file_gid;     // DeviceFileGID
};

// Parses the text of the params file: "Name: value" lines (blank lines allowed). Parameters other
// than the five above are only checked for the "Name: value" shape. Throws Error (unavailable, exit 3)
// naming `source` and the line for a line of another shape, a value of one of the five that is not a
// number in range, or one of the five listed twice; its remedy names the file through setting_name.
NvidiaParams parse_nvidia_params(std::string_view text, std::string_view source);

}  // namespace cumemctl::imex
