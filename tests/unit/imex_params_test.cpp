#include <doctest/doctest.h>

#include <string>

#include "imex/nvidia_params.hpp"
#include "base/error.hpp"

using namespace cumemctl;
using namespace cumemctl::imex;

namespace {

// /proc/driver/nvidia/params of a 580 driver, trimmed.
constexpr const char* kParams =
    "ResmanDebugLevel: 4294967295\n"
    "RmLogonRC: 1\n"
    "ModifyDeviceFiles: 1\n"
    "DeviceFileUID: 0\n"
    "DeviceFileGID: 44\n"
    "DeviceFileMode: 432\n"
    "EnableGpuFirmware: 18\n"
    "ImexChannelCount: 2048\n"
    "CreateImexChannel0: 0\n"
    "RegistryDwords: \"\"\n"
    "RmMsg: \"a: b; c\"\n"
    "ExcludedGpus: \"\"\n";

std::string parse_error(const std::string& text) {
    try {
        parse_nvidia_params(text, "params");
    } catch (const Error& e) {
        CHECK(e.exit_code() == ExitCode::unavailable);
        CHECK_FALSE(e.problem().remedy.empty());
        return e.problem().message;
    }
    FAIL("accepted: ", text);
    return {};
}

}  // namespace

TEST_CASE("the params file gives the count, channel0 and the device-file defaults") {
    const NvidiaParams p = parse_nvidia_params(kParams, "params");
    CHECK(p.imex_channel_count == 2048u);
    CHECK(p.create_imex_channel0 == false);
    CHECK(p.device_file_mode == 0660u);
    CHECK(p.device_file_uid == 0u);
    CHECK(p.device_file_gid == 44u);
}

TEST_CASE("what the file does not list stays unknown") {
    const NvidiaParams p = parse_nvidia_params("RmLogonRC: 1\n\nRmMsg: \"\"", "params");
    CHECK_FALSE(p.imex_channel_count.has_value());
    CHECK_FALSE(p.create_imex_channel0.has_value());
    CHECK_FALSE(p.device_file_mode.has_value());
    CHECK_FALSE(parse_nvidia_params("", "params").imex_channel_count.has_value());
}

TEST_CASE("CreateImexChannel0 is a flag and the count has a range") {
    CHECK(parse_nvidia_params("CreateImexChannel0: 1\n", "params").create_imex_channel0 == true);
    CHECK(parse_nvidia_params("CreateImexChannel0:0", "params").create_imex_channel0 == false);
    CHECK(parse_nvidia_params("ImexChannelCount: 0\n", "params").imex_channel_count == 0u);
    CHECK(parse_nvidia_params("ImexChannelCount: 1048576\n", "params").imex_channel_count == kMaxImexChannelCount);
    CHECK(parse_error("ImexChannelCount: 1048577\n") ==
          "params:1: ImexChannelCount is above 1048576: 'ImexChannelCount: 1048577'");
}

TEST_CASE("a malformed params file is an error that names the line") {
    CHECK(parse_error("RmLogonRC: 1\ngarbage\n") == "params:2: not a 'Name: value' line: 'garbage'");
    CHECK(parse_error(": 5\n") == "params:1: not a 'Name: value' line: ': 5'");
    CHECK(parse_error(" ImexChannelCount: 5\n").find("params:1: not a 'Name: value' line") == 0);
    CHECK(parse_error("ImexChannelCount: lots\n") ==
          "params:1: ImexChannelCount is not a decimal number: 'ImexChannelCount: lots'");
    CHECK(parse_error("ImexChannelCount: -1\n").find("params:1: ImexChannelCount is not a decimal number") == 0);
    CHECK(parse_error("ImexChannelCount: 0x800\n").find("is not a decimal number") != std::string::npos);
    CHECK(parse_error("ImexChannelCount:\n").find("is not a decimal number") != std::string::npos);
    CHECK(parse_error("ImexChannelCount: 99999999999999999999999\n").find("is not a decimal number") !=
          std::string::npos);
    CHECK(parse_error("DeviceFileMode: 4096\n") == "params:1: DeviceFileMode is above 4095: 'DeviceFileMode: 4096'");
    CHECK(parse_error("DeviceFileUID: 4294967295\n").find("DeviceFileUID is above") != std::string::npos);
    CHECK(parse_error("ImexChannelCount: 4\nRmMsg: \"\"\nImexChannelCount: 8\n") ==
          "params:3: ImexChannelCount listed twice: 'ImexChannelCount: 8'");
}
