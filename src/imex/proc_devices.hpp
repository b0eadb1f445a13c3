// Reading /proc/devices: the major number the kernel gave a character-device driver.
#pragma once

#include <optional>
#include <string_view>

namespace cumemctl::imex {

// The character-device name under which the NVIDIA driver registers the IMEX channels.
inline constexpr std::string_view kImexChannelsDeviceName = "nvidia-caps-imex-channels";

// The highest major number a Linux device number can hold (12 bits).
inline constexpr int kMaxMajor = 4095;

// Finds the major of the character device `name` in the text of /proc/devices: only in the
// "Character devices:" section, the whole name and never a prefix. nullopt when it is not there.
// Throws Error (unavailable, exit 3) naming `source` and the line when the text is not in the format
// of /proc/devices, or when the name is listed twice with different majors; its remedy names the file
// through setting_name.
std::optional<int> find_char_major(std::string_view text, std::string_view name, std::string_view source);

}  // namespace cumemctl::imex
