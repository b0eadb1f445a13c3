// A setting that a core text names: the core's words by default, the running command's flag from the
// command line's one table (cmd/setting_flags.cpp); and that table held against each command's --help.
#include <doctest/doctest.h>

#include <algorithm>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "base/setting.hpp"
#include "gpu/device/peer_access.hpp"
#include "ipc/process.hpp"
#include "running_command.hpp"
#include "setting_flags.hpp"

using namespace cumemctl;
using testing_settings::RunningCommand;

namespace {

std::vector<Setting> every_setting() {
    std::vector<Setting> all;
    for (int i = 0; i <= static_cast<int>(Setting::last); ++i) all.push_back(static_cast<Setting>(i));
    return all;
}

std::vector<Command> every_command() {
    std::vector<Command> all;
    for (int i = 0; i <= static_cast<int>(Command::last); ++i) all.push_back(static_cast<Command>(i));
    return all;
}

// The flags that a help page lists as options ("  -d,--device DEVICE  ..."), not those its prose names.
std::set<std::string> help_flags(const std::vector<std::string>& args) {
    ipc::SpawnRequest r;
    r.executable = CUMEMCTL_BINARY;
    r.args = args;
    const ipc::CapturedRun run = ipc::run_captured(r, ipc::Timeout{20000});
    REQUIRE(run.status == 0);
    std::set<std::string> flags;
    std::istringstream lines(run.out);
    static const std::regex option(R"(^  (-[A-Za-z],)?(--[a-z][a-z-]*))");
    for (std::string line; std::getline(lines, line);) {
        std::smatch m;
        if (std::regex_search(line, m, option)) flags.insert(m[2]);
    }
    REQUIRE_FALSE(flags.empty());
    return flags;
}

bool lists(const cmd::SettingFlag& f, Command c) {
    return std::find(f.commands.begin(), f.commands.end(), c) != f.commands.end();
}

}  // namespace

TEST_CASE("every setting has words of its own in the core, none of them a flag") {
    const RunningCommand none;
    std::set<std::string> words;
    for (const Setting s : every_setting()) {
        const std::string w(setting_words(s));
        CHECK(w.find("--") == std::string::npos);
        CHECK(setting_name(s) == w);
        words.insert(w);
    }
    CHECK(words.size() == every_setting().size());
}

TEST_CASE("the running command's flags name their settings; the others keep the core's words") {
    {
        const RunningCommand create(Command::create);
        CHECK(setting_name(Setting::access) == "--access");
        CHECK(setting_name(Setting::quick) == "a quick run");
        // A core text made now names the flag.
        CHECK(gpu::NoPeerAccessError(3, 0).problem().remedy.rfind("leave device 3 out of --access; ", 0) == 0);
    }
    const RunningCommand doctor(Command::doctor);
    CHECK(setting_name(Setting::quick) == "--quick");
    CHECK(setting_name(Setting::access) == "the devices given access");
    CHECK(gpu::NoPeerAccessError(3, 0).problem().remedy.rfind("leave device 3 out of the devices given access; ", 0) ==
          0);
}

TEST_CASE("a flag that two commands spell alike names its own setting on each") {
    CHECK(command_flag(Command::le_bind, Setting::endpoint_size) == "--size");
    CHECK(command_flag(Command::memtest, Setting::test_size) == "--size");
    CHECK(command_flag(Command::memtest, Setting::endpoint_size) == "endpoint size");
    CHECK(command_flag(Command::imex_setup, Setting::replace_nodes) == "--force");
    CHECK(command_flag(Command::memtest, Setting::start_anyway) == "--force");
    CHECK(command_flag(Command::memtest, Setting::replace_nodes) == "a forced run");
    CHECK(command_flag(Command::create, Setting::handle_type) == "handle type");
    // What a text says where one flag alone is not the setting.
    CHECK(command_flag(Command::le_bind, Setting::endpoint_devices) == "--device N or --devices LIST");
    // Global options are every command's.
    for (const Command c : every_command()) CHECK(command_flag(c, Setting::libcuda) == "--libcuda");
}

TEST_CASE("a command line is the command's name and its flags as typed, each with its value") {
    CHECK(command_line(Command::imex_setup) == "imex-setup");
    CHECK(command_line(Command::imex_setup, {{Setting::channel, "3"}, {Setting::channel_owner, "USER"}}) ==
          "imex-setup --channel 3 --owner USER");
    CHECK(command_line(Command::doctor, {{Setting::json}}) == "doctor --json");
    CHECK(command_line(Command::create, {{Setting::location, "domain:I"}, {Setting::map}}) ==
          "create --location domain:I --map");
}

namespace {

// The commands a help page lists ("  doctor   check that ..." under "Commands:").
std::vector<std::string> help_commands() {
    ipc::SpawnRequest r;
    r.executable = CUMEMCTL_BINARY;
    r.args = {"--help"};
    const ipc::CapturedRun run = ipc::run_captured(r, ipc::Timeout{20000});
    REQUIRE(run.status == 0);
    std::vector<std::string> names;
    std::istringstream lines(run.out);
    bool listed = false;
    static const std::regex command(R"(^  ([a-z][a-z-]*) )");
    for (std::string line; std::getline(lines, line);) {
        if (line.empty()) listed = false;
        std::smatch m;
        if (listed && std::regex_search(line, m, command)) names.push_back(m[1]);
        if (line == "Commands:") listed = true;
    }
    return names;
}

}  // namespace

TEST_CASE("every command the help lists is a Command, so that its flags name its settings") {
    const std::vector<std::string> names = help_commands();
    CHECK(names.size() >= 13);
    for (const std::string& name : names) {
        CAPTURE(name);
        CHECK(cmd::command_named(name).has_value());
    }
}

TEST_CASE("a command's name gives back the command") {
    for (const Command c : every_command()) {
        CAPTURE(command_name(c));
        CHECK(cmd::command_named(command_name(c)) == c);
    }
    CHECK_FALSE(cmd::command_named("doctr").has_value());
    CHECK_FALSE(cmd::command_named("").has_value());
}

TEST_CASE("the table of flags holds against every command's --help, both ways") {
    const std::set<std::string> global = help_flags({"--help"});
    std::vector<std::pair<Command, std::set<std::string>>> pages;
    for (const Command c : every_command()) pages.emplace_back(c, help_flags({std::string(command_name(c)), "--help"}));
    for (const cmd::SettingFlag& f : cmd::setting_flags()) {
        CAPTURE(f.flag);
        // A global option: the root's help lists it.
        if (f.commands.empty()) CHECK(global.count(std::string(f.flag)) == 1);
        for (const auto& page : pages) {
            const Command c = page.first;  // named: CAPTURE's lambda (clang < 16)
            CAPTURE(command_name(c));
            const bool has = page.second.count(std::string(f.flag)) == 1;
            // Every command the row names has the flag; and a flag that is this setting's alone is on no
            // command that the row leaves out.
            if (lists(f, c)) CHECK(has);
            if (!f.commands.empty() && !f.spelled_alike && has) CHECK(lists(f, c));
        }
    }
}
