// A setting that a core text names: the core's words by default, the running command's flag where the
// command line's one table (cmd/option_names.cpp) installed it.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include <CLI/CLI.hpp>

#include "base/setting.hpp"
#include "gpu/device/peer_access.hpp"
#include "option_names.hpp"

using namespace cumemctl;

namespace {

constexpr Setting kEverySetting[] = {Setting::libcuda,       Setting::libnvml,    Setting::libpmix,
                                     Setting::location,      Setting::quick,      Setting::rank,
                                     Setting::ranks,         Setting::rendezvous, Setting::rendezvous_dir,
                                     Setting::pool_max_size, Setting::access};

// Restores the core's words when a test ends.
struct CoreWords {
    CoreWords() { install_setting_names({}); }
    ~CoreWords() { install_setting_names({}); }
};

}  // namespace

TEST_CASE("every setting has words of its own in the core, none of them a flag") {
    const CoreWords core;
    std::set<std::string> words;
    for (const Setting s : kEverySetting) {
        const std::string w(setting_words(s));
        CHECK(w.find("--") == std::string::npos);
        CHECK(setting_name(s) == w);
        words.insert(w);
    }
    CHECK(words.size() == std::size(kEverySetting));
}

TEST_CASE("installed flags name their settings; the others keep the core's words; a new install replaces") {
    const CoreWords core;
    install_setting_names({{Setting::access, "--access"}});
    CHECK(setting_name(Setting::access) == "--access");
    CHECK(setting_name(Setting::quick) == "a quick run");
    // A core text made now names the flag.
    CHECK(gpu::NoPeerAccessError(3, 0).problem().remedy.rfind("leave device 3 out of --access; ", 0) == 0);
    install_setting_names({{Setting::quick, "--quick"}});
    CHECK(setting_name(Setting::access) == "the devices given access");
    CHECK(gpu::NoPeerAccessError(3, 0).problem().remedy.rfind("leave device 3 out of the devices given access; ", 0) ==
          0);
}

TEST_CASE("the table gives the flags that the running command and the global options have, and no others") {
    CLI::App root;
    std::string libcuda, location, max_size;
    root.add_option("--libcuda", libcuda);
    CLI::App* create = root.add_subcommand("create");
    create->add_option("--location", location);
    create->add_option("--max-size", max_size);
    CLI::App* doctor = root.add_subcommand("doctor");
    bool quick = false;
    doctor->add_flag("--quick", quick);
    const auto of_create = cmd::option_names(root, *create);
    CHECK(of_create == std::map<Setting, std::string>{{Setting::libcuda, "--libcuda"},
                                                      {Setting::location, "--location"},
                                                      {Setting::pool_max_size, "--max-size"}});
    const auto of_doctor = cmd::option_names(root, *doctor);
    CHECK(of_doctor.at(Setting::quick) == "--quick");
    CHECK(of_doctor.count(Setting::location) == 0);
    CHECK(of_doctor.count(Setting::access) == 0);
}
