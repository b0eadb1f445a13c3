#include "help_text.hpp"

#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace cumemctl::cmd {
namespace {

class HelpFormatter final : public CLI::Formatter {
public:
    // The type, default and REQUIRED as CLI11 writes them; no Needs or Excludes.
    std::string make_option_opts(const CLI::Option* opt) const override {
        std::string out;
        if (!opt->get_option_text().empty()) return " " + opt->get_option_text();
        if (opt->get_type_size() == 0) return out;
        if (!opt->get_type_name().empty()) out += " " + get_label(opt->get_type_name());
        if (!opt->get_default_str().empty()) out += "=" + opt->get_default_str();
        if (opt->get_expected_max() == CLI::detail::expected_max_vector_size) out += " ...";
        if (opt->get_required()) out += " " + get_label("REQUIRED");
        return out;
    }
};

// Two or three command lines per command, as an operator types them first.
const std::map<std::string, std::vector<std::string>>& examples() {
    static const std::map<std::string, std::vector<std::string>> table{
        {"doctor",
         {"cumemctl doctor", "cumemctl doctor --quick --format prometheus   (every minute beside jobs)",
          "cumemctl doctor --expect-idle --format line   (a Slurm prolog: one line for the drain reason)"}},
        {"devices", {"cumemctl devices", "cumemctl devices --device GPU-5f0a6b1c --json"}},
        {"imex-setup",
         {"sudo cumemctl imex-setup --check", "sudo cumemctl imex-setup --channel 0",
          "sudo cumemctl imex-setup --owner nobody --verify"}},
        {"le-bind", {"cumemctl le-bind --size 2MiB", "cumemctl le-bind --type multicast --devices 0,1 --size 2MiB"}},
        {"granularity", {"cumemctl granularity", "cumemctl granularity --location host-numa --size 1GiB"}},
        {"create",
         {"cumemctl create --size 2MiB --verify", "cumemctl create --size 1GiB --handle-type fabric --import-check",
          "cumemctl create --size 64MiB --access 0,1 --verify"}},
        {"pool-stats", {"cumemctl pool-stats", "cumemctl pool-stats --exercise 64x16MiB"}},
        {"trim", {"cumemctl trim", "cumemctl trim --keep 64MiB --exercise 32x4MiB"}},
        {"fleet",
         {"cumemctl fleet reports/*.json",
          "cumemctl fleet --expect 'gpu[001-300]' --max-age 1h --format nodelist reports/*.json"}},
        {"fabric-matrix",
         {"cumemctl fabric-matrix --local",
          "srun --mpi=pmix --gpus-per-node=4 cumemctl fabric-matrix --rendezvous pmix"}},
        {"memtest", {"cumemctl memtest", "cumemctl memtest --device 0 --time 60 --record"}},
        {"completion", {"cumemctl completion bash > /etc/bash_completion.d/cumemctl", "cumemctl completion zsh"}},
    };
    return table;
}

constexpr const char* kGlobals =
    "Global options, before or after the command: --json, --format FORMAT, --libcuda PATH, --libnvml PATH, "
    "--no-color (cumemctl --help); the manual: man cumemctl";

}  // namespace

std::shared_ptr<CLI::Formatter> help_formatter() {
    return std::make_shared<HelpFormatter>();
}

void add_help_footers(CLI::App& root) {
    root.footer(
        fmt::format("Examples:\n  cumemctl doctor\n  cumemctl devices\n  cumemctl doctor --json | jq "
                    "'.results.checks[] | select(.status == \"fail\")'\n\n{}",
                    kGlobals));
    for (CLI::App* sub : root.get_subcommands([](CLI::App* s) { return !s->get_group().empty(); })) {
        const auto it = examples().find(sub->get_name());
        std::string text;
        if (it != examples().end()) {
            text = "Examples:\n";
            for (const auto& line : it->second) text += "  " + line + "\n";
            text += "\n";
        }
        sub->footer(text + kGlobals);
    }
}

}  // namespace cumemctl::cmd
