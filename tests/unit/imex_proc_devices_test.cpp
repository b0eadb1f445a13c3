#include <doctest/doctest.h>

#include <string>

#include "imex/proc_devices.hpp"
#include "base/error.hpp"

using namespace cumemctl;
using namespace cumemctl::imex;

namespace {

// /proc/devices as an H200 node shows it, trimmed.
constexpr const char* kH200 =
    "Character devices:\n"
    "  1 mem\n"
    "  4 /dev/vc/0\n"
    "  4 tty\n"
    "195 nvidia-frontend\n"
    "234 nvidia-caps\n"
    "242 nvidia-caps-imex-channels\n"
    "243 nvidia-uvm\n"
    "\n"
    "Block devices:\n"
    "  7 loop\n"
    "259 blkext\n";

std::optional<int> imex_major(const std::string& text) {
    return find_char_major(text, kImexChannelsDeviceName, "devices");
}

// The message of the Error that parsing `text` throws; fails the test when nothing is thrown.
std::string proc_devices_error(const std::string& text) {
    try {
        imex_major(text);
    } catch (const Error& e) {
        CHECK(e.exit_code() == ExitCode::unavailable);
        CHECK_FALSE(e.problem().remedy.empty());
        return e.problem().message;
    }
    FAIL("accepted: ", text);
    return {};
}

}  // namespace

TEST_CASE("the IMEX major comes from the character devices section") {
    CHECK(imex_major(kH200) == 242);
    CHECK(find_char_major(kH200, "nvidia-caps", "devices") == 234);
    CHECK(find_char_major(kH200, "tty", "devices") == 4);
    CHECK(find_char_major(kH200, "/dev/vc/0", "devices") == 4);
}

TEST_CASE("the name must match whole, never as a prefix or a longer name") {
    CHECK_FALSE(imex_major("Character devices:\n234 nvidia-caps\n").has_value());
    CHECK_FALSE(imex_major("Character devices:\n250 nvidia-caps-imex-channels-v2\n").has_value());
    CHECK_FALSE(imex_major("Character devices:\n250 nvidia-caps-imex\n").has_value());
    CHECK_FALSE(find_char_major(kH200, "nvidia", "devices").has_value());
}

TEST_CASE("a block device of the same name does not count") {
    CHECK_FALSE(
        imex_major("Character devices:\n  1 mem\n\nBlock devices:\n242 nvidia-caps-imex-channels\n").has_value());
    CHECK(imex_major("Block devices:\n  7 loop\n\nCharacter devices:\n242 nvidia-caps-imex-channels\n") == 242);
}

TEST_CASE("spacing, a missing last newline and other sections are read") {
    CHECK(imex_major("Character devices:\n242 nvidia-caps-imex-channels") == 242);
    CHECK(imex_major("Character devices:\n\t242\tnvidia-caps-imex-channels  \n") == 242);
    CHECK(imex_major("Character devices:\n  1 mem\n\nMisc devices:\n  9 other\n") == std::nullopt);
    CHECK(imex_major("Character devices:\n4095 nvidia-caps-imex-channels\n") == 4095);
    // Listed twice with the same major is the same answer.
    CHECK(imex_major("Character devices:\n242 nvidia-caps-imex-channels\n242 nvidia-caps-imex-channels\n") == 242);
}

TEST_CASE("a malformed file is an error that names the line") {
    CHECK(proc_devices_error("Character devices:\n  1 mem\nrubbish\n") ==
          "devices:3: not a heading or a 'MAJOR NAME' line: 'rubbish'");
    CHECK(proc_devices_error("242 nvidia-caps-imex-channels\n") ==
          "devices:1: a device before any section heading: '242 nvidia-caps-imex-channels'");
    CHECK(proc_devices_error("Character devices:\n4096 nvidia-caps-imex-channels\n")
              .find("devices:2: major number too large") == 0);
    CHECK(
        proc_devices_error("Character devices:\n99999999999999999999 x\n").find("devices:2: major number too large") ==
        0);
    CHECK(proc_devices_error("Character devices:\n242nvidia-caps-imex-channels\n").find("devices:2: no blank") == 0);
    CHECK(proc_devices_error("Character devices:\n242 \n").find("devices:2: not a device name") == 0);
    CHECK(proc_devices_error("Character devices:\n242 nvidia caps\n").find("devices:2: not a device name") == 0);
    CHECK(proc_devices_error("Character devices:\r\n242 nvidia-caps-imex-channels\r\n") ==
          "devices:1: not a heading or a 'MAJOR NAME' line: 'Character devices:\\x0d'");
    CHECK(proc_devices_error("Character devices:\n-1 mem\n").find("devices:2:") == 0);
    CHECK(proc_devices_error("Character devices:\n242 nvidia-caps-imex-channels\n243 nvidia-caps-imex-channels\n")
              .find("devices:3: nvidia-caps-imex-channels listed again with another major (first 242)") == 0);
}

TEST_CASE("a file without a character devices section is an error") {
    CHECK(proc_devices_error("") == "devices: no 'Character devices:' section");
    CHECK(proc_devices_error("\n\n") == "devices: no 'Character devices:' section");
    CHECK(proc_devices_error("Block devices:\n  7 loop\n") == "devices: no 'Character devices:' section");
}

TEST_CASE("a quoted line is escaped and cut") {
    const std::string message = proc_devices_error("Character devices:\n" + std::string(200, 'x') + "\x01\n");
    CHECK(message.size() < 140);
    CHECK(message.find("...") != std::string::npos);
    CHECK(proc_devices_error(std::string("Character devices:\n\x07\xff\n")) ==
          "devices:2: not a heading or a 'MAJOR NAME' line: '\\x07\\xff'");
}
