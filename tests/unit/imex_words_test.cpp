// imex-setup's core names settings, never imex-setup's options: each text names them through
// setting_name where it is made (the core's words with no command running, imex-setup's flags where
// it runs).
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "imex/channel_plan.hpp"
#include "imex/imex_setup.hpp"
#include "imex/nvidia_params.hpp"
#include "imex/proc_devices.hpp"
#include "running_command.hpp"

using namespace cumemctl;
using namespace cumemctl::imex;
using testing_settings::RunningCommand;

namespace {

// imex-setup running: its flags name the settings its core names.
RunningCommand imex_setup_flags() {
    return RunningCommand(Command::imex_setup);
}

// The remedy of the Error that `parse` throws ("" when it throws none).
template <class Parse>
std::string remedy_of(Parse&& parse) {
    try {
        parse();
    } catch (const Error& e) {
        return e.problem().remedy;
    }
    return "";
}

}  // namespace

TEST_CASE("every imex-setup setting has its own words in the core, none an option") {
    const std::vector<Setting> settings{Setting::proc_devices,  Setting::params_file,  Setting::dev_root,
                                        Setting::channel_owner, Setting::channel_mode, Setting::replace_nodes,
                                        Setting::check_only,    Setting::dry_run};
    std::set<std::string> words;
    for (const Setting s : settings) words.emplace(setting_words(s));
    CHECK(words.size() == settings.size());
    for (const auto& w : words) CHECK(w.find("--") == std::string::npos);
}

TEST_CASE("the /proc parsers' remedies name the file in the core's words, or in imex-setup's flags") {
    const auto devices = [] { find_char_major("rubbish\n", kImexChannelsDeviceName, "/proc/devices"); };
    const auto params = [] { parse_nvidia_params("rubbish\n", "/proc/driver/nvidia/params"); };
    {
        const RunningCommand core_words;
        CHECK(remedy_of(devices).rfind("point the devices path at the kernel's /proc/devices", 0) == 0);
        CHECK(remedy_of(params).rfind("point the params path at the driver's /proc/driver/nvidia/params", 0) == 0);
    }
    const RunningCommand flags = imex_setup_flags();
    CHECK(remedy_of(devices).rfind("point --proc-devices at the kernel's /proc/devices", 0) == 0);
    CHECK(remedy_of(params).rfind("point --params at", 0) == 0);
}

TEST_CASE("what a core did not write (a path, a line of a file) is shown as it is, braces and all") {
    const RunningCommand flags = imex_setup_flags();
    try {
        find_char_major("Character devices:\nx {force} {{owner}\n", kImexChannelsDeviceName, "/tmp/{check}/devices");
        FAIL("accepted");
    } catch (const Error& e) {
        CHECK(e.problem().message ==
              "/tmp/{check}/devices:2: not a heading or a 'MAJOR NAME' line: 'x {force} {{owner}'");
    }
    ImexSetupRequest r;
    r.dev_root = "/nonexistent/{force}";
    r.proc_devices = "/nonexistent/{dry_run}/devices";
    try {
        run_imex_setup(r);
        FAIL("accepted");
    } catch (const Error& e) {
        CHECK(e.problem().message.rfind("cannot read /nonexistent/{dry_run}/devices (--proc-devices): ", 0) == 0);
        CHECK(e.problem().remedy.find("point --proc-devices at a copy of /proc/devices") != std::string::npos);
    }
}

TEST_CASE(
    "a channel's plan and a mode's source name the settings in the core's words, or as the running command spells "
    "them") {
    const NodeSpec want{3, 242, 0, 0, 0666};
    const NodeState wrong{NodeKind::char_device, 242, 4, 0, 0, 0666};
    {
        const RunningCommand core_words;
        CHECK(plan_channel(want, wrong, {}).detail ==
              "character device 242:4, not character device 242:3; a forced run replaces it");
        CHECK(mode_source_name(ModeSource::owner) == "the channels' owner");
    }
    const RunningCommand flags = imex_setup_flags();
    CHECK(plan_channel(want, wrong, {}).detail ==
          "character device 242:4, not character device 242:3; --force replaces it");
    CHECK(mode_source_name(ModeSource::mode) == "--mode");
    CHECK(mode_source_name(ModeSource::device_file_mode) == "DeviceFileMode");
}
