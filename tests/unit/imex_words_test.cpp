// imex-setup's core names properties, never imex-setup's options: each text is formatted where it is
// made, with the request's names (the core's words by default, a caller's where it gives them).
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "imex/channel_plan.hpp"
#include "imex/imex_setup.hpp"
#include "imex/imex_words.hpp"
#include "imex/nvidia_params.hpp"
#include "imex/proc_devices.hpp"

using namespace cumemctl;
using namespace cumemctl::imex;

namespace {

// A command's names: each property's key as an option.
ImexNames imex_words_test_options() {
    return ImexNames{.proc_devices = "--proc_devices",
                     .params = "--params",
                     .dev_root = "--dev_root",
                     .owner = "--owner",
                     .mode = "--mode",
                     .force = "--force",
                     .check = "--check",
                     .dry_run = "--dry_run"};
}

}  // namespace

TEST_CASE("every imex-setup property has its own words in the core, none an option") {
    const ImexNames n;
    const std::vector<std::string> words{n.proc_devices, n.params, n.force, n.check,
                                         n.dev_root,     n.owner,  n.mode,  n.dry_run};
    CHECK(std::set<std::string>(words.begin(), words.end()).size() == words.size());
    for (const auto& w : words) CHECK(w.find("--") == std::string::npos);
}

TEST_CASE("the /proc parsers' remedies name the file as the caller does: doctor reads the core's words") {
    try {
        find_char_major("rubbish\n", kImexChannelsDeviceName, "/proc/devices");
        FAIL("accepted");
    } catch (const Error& e) {
        CHECK(e.problem().remedy.rfind("point the devices path at the kernel's /proc/devices", 0) == 0);
    }
    try {
        find_char_major("rubbish\n", kImexChannelsDeviceName, "/proc/devices", imex_words_test_options());
        FAIL("accepted");
    } catch (const Error& e) {
        CHECK(e.problem().remedy.rfind("point --proc_devices at the kernel's /proc/devices", 0) == 0);
    }
    try {
        parse_nvidia_params("rubbish\n", "/proc/driver/nvidia/params");
        FAIL("accepted");
    } catch (const Error& e) {
        CHECK(e.problem().remedy.rfind("point the params path at the driver's /proc/driver/nvidia/params", 0) == 0);
    }
    try {
        parse_nvidia_params("rubbish\n", "/proc/driver/nvidia/params", imex_words_test_options());
        FAIL("accepted");
    } catch (const Error& e) {
        CHECK(e.problem().remedy.rfind("point --params at", 0) == 0);
    }
}

TEST_CASE("what a core did not write (a path, a line of a file) is shown as it is, braces and all") {
    try {
        find_char_major("Character devices:\nx {force} {{owner}\n", kImexChannelsDeviceName, "/tmp/{check}/devices",
                        imex_words_test_options());
        FAIL("accepted");
    } catch (const Error& e) {
        CHECK(e.problem().message ==
              "/tmp/{check}/devices:2: not a heading or a 'MAJOR NAME' line: 'x {force} {{owner}'");
    }
    ImexSetupRequest r;
    r.dev_root = "/nonexistent/{force}";
    r.proc_devices = "/nonexistent/{dry_run}/devices";
    r.names = imex_words_test_options();
    try {
        run_imex_setup(r);
        FAIL("accepted");
    } catch (const Error& e) {
        CHECK(e.problem().message.rfind("cannot read /nonexistent/{dry_run}/devices (--proc_devices): ", 0) == 0);
        CHECK(e.problem().remedy.find("point --proc_devices at a copy of /proc/devices") != std::string::npos);
    }
}

TEST_CASE("a channel's plan names the options that would change it as the caller does") {
    const NodeSpec want{3, 242, 0, 0, 0666};
    const NodeState wrong{NodeKind::char_device, 242, 4, 0, 0, 0666};
    CHECK(plan_channel(want, wrong, {}).detail ==
          "character device 242:4, not character device 242:3; a forced run "
          "replaces it");
    CHECK(plan_channel(want, wrong, {}, imex_words_test_options()).detail ==
          "character device 242:4, not character device 242:3; --force replaces it");
    CHECK(mode_source_name(ModeSource::owner) == "the channels' owner");
    CHECK(mode_source_name(ModeSource::mode, imex_words_test_options()) == "--mode");
}
