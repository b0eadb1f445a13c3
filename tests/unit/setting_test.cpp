// A setting that a core text names: the core's words by default, the running command's flag where the
// command line's one table (cmd/option_names.cpp) installed it.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include <CLI/CLI.hpp>

#include "base/setting.hpp"
#include "gpu/device/peer_access.hpp"
#include "installed_names.hpp"
#include "option_names.hpp"

using namespace cumemctl;
using testing_settings::InstalledNames;

namespace {

constexpr Setting kEverySetting[] = {Setting::libcuda,
                                     Setting::libnvml,
                                     Setting::libpmix,
                                     Setting::location,
                                     Setting::quick,
                                     Setting::rank,
                                     Setting::ranks,
                                     Setting::rendezvous,
                                     Setting::rendezvous_dir,
                                     Setting::pool_max_size,
                                     Setting::access,
                                     Setting::endpoint_size,
                                     Setting::endpoint_offset,
                                     Setting::mem_offset,
                                     Setting::bind_size,
                                     Setting::handle_type,
                                     Setting::counted_ops,
                                     Setting::by_address,
                                     Setting::limits_only,
                                     Setting::construction_timeout,
                                     Setting::endpoint_devices,
                                     Setting::proc_devices,
                                     Setting::params_file,
                                     Setting::dev_root,
                                     Setting::channel_owner,
                                     Setting::channel_mode,
                                     Setting::replace_nodes,
                                     Setting::check_only,
                                     Setting::dry_run,
                                     Setting::round_up,
                                     Setting::keep,
                                     Setting::exercise,
                                     Setting::test_size,
                                     Setting::chunk,
                                     Setting::start_anyway};

}  // namespace

TEST_CASE("every setting has words of its own in the core, none of them a flag") {
    const InstalledNames core;
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
    const InstalledNames core;
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

TEST_CASE("a flag that two commands spell alike names its setting only on the command the table gives it") {
    CLI::App root;
    std::string value;
    bool flag = false;
    CLI::App* le_bind = root.add_subcommand("le-bind");
    for (const char* name : {"--size", "--offset", "--timeout", "--handle-type", "--device", "--devices"})
        le_bind->add_option(name, value);
    CLI::App* memtest = root.add_subcommand("memtest");
    memtest->add_option("--size", value);
    memtest->add_flag("--force", flag);
    CLI::App* imex_setup = root.add_subcommand("imex-setup");
    imex_setup->add_flag("--force", flag);
    CLI::App* trim = root.add_subcommand("trim");
    trim->add_option("--keep", value);
    CLI::App* create = root.add_subcommand("create");
    create->add_option("--size", value);
    CLI::App* fabric_matrix = root.add_subcommand("fabric-matrix");
    fabric_matrix->add_flag("--keep", flag);
    CLI::App* doctor = root.add_subcommand("doctor");
    doctor->add_option("--timeout", value);
    const auto of_le_bind = cmd::option_names(root, *le_bind);
    CHECK(of_le_bind.at(Setting::endpoint_size) == "--size");
    CHECK(of_le_bind.at(Setting::endpoint_offset) == "--offset");
    CHECK(of_le_bind.at(Setting::construction_timeout) == "--timeout");
    CHECK(of_le_bind.at(Setting::handle_type) == "--handle-type");
    CHECK(of_le_bind.count(Setting::test_size) == 0);
    // What a text says where one flag alone is not the setting.
    CHECK(of_le_bind.at(Setting::endpoint_devices) == "--device N or --devices LIST");
    CHECK(cmd::option_names(root, *memtest) ==
          std::map<Setting, std::string>{{Setting::test_size, "--size"}, {Setting::start_anyway, "--force"}});
    CHECK(cmd::option_names(root, *imex_setup) == std::map<Setting, std::string>{{Setting::replace_nodes, "--force"}});
    CHECK(cmd::option_names(root, *trim) == std::map<Setting, std::string>{{Setting::keep, "--keep"}});
    CHECK(cmd::option_names(root, *create).empty());
    CHECK(cmd::option_names(root, *fabric_matrix).empty());
    CHECK(cmd::option_names(root, *doctor).empty());
}
