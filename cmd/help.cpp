// Examples and the global options at the end of every --help; CLI11's formatter without "Excludes:".
#include "help.hpp"

#include <array>
#include <sstream>
#include <stdexcept>
#include <string_view>

namespace cumemctl::cmd {
namespace {

// The global options, as every command's help names them (they go before or after the command).
constexpr std::string_view kGlobalOptions =
    "Global options (before or after the command): --json, --format FORMAT, --libcuda PATH, --libnvml PATH, "
    "--no-color, --help, --version; see cumemctl(1).";

struct Examples {
    std::string_view command;
    std::array<std::string_view, 3> lines;  // two or three; an empty third is none
};

// Each command's examples: short, each a whole command line that works as written (the man pages have
// more, with what they print).
constexpr Examples kExamples[] = {
    {"doctor",
     {"cumemctl doctor", "cumemctl doctor --quick --expect-gpus 8 --format line",
      "cumemctl doctor --checks imex-channels,capabilities --json"}},
    {"devices", {"cumemctl devices", "cumemctl devices --no-free --json", ""}},
    {"imex-setup", {"cumemctl imex-setup --check --verify", "cumemctl imex-setup --all --dry-run", ""}},
    {"le-bind",
     {"cumemctl le-bind --device 0 --size 2MiB", "cumemctl le-bind --device 0 --size 1GiB --limits-only", ""}},
    {"granularity", {"cumemctl granularity", "cumemctl granularity --location device --handle-type fabric --json", ""}},
    {"create",
     {"cumemctl create --size 1GiB --map --verify",
      "cumemctl create --size 64MiB --handle-type posix-fd --export --import-check",
      "cumemctl create --pool --size 64MiB --handle-type posix-fd --ipc-check"}},
    {"pool-stats",
     {"cumemctl pool-stats", "cumemctl pool-stats --exercise 64x16MiB",
      "cumemctl pool-stats --pool new --location host --exercise 16x2MiB"}},
    {"trim", {"cumemctl trim", "cumemctl trim --keep 256MiB --exercise 8x1GiB --json", ""}},
    {"fleet",
     {"cumemctl fleet reports/*.json", "cumemctl fleet --json reports/*.json > fleet.json",
      "cumemctl fleet reports/*.json --format html > fleet.html"}},
    {"fabric-matrix",
     {"cumemctl fabric-matrix --local",
      "srun -N 16 --ntasks-per-node=4 --gpus-per-node=4 --exclusive cumemctl fabric-matrix --json > matrix.json",
      "cumemctl fabric-matrix --summary /shared/run --run test1"}},
    {"memtest",
     {"cumemctl memtest --device 0", "cumemctl memtest --patterns address,random --passes 3 --time 60",
      "cumemctl memtest --json --record"}},
    {"completion", {"source <(cumemctl completion bash)", "cumemctl completion zsh > ~/.zfunc/_cumemctl", ""}},
};

std::string footer(const Examples& e) {
    std::string text = "Examples:\n";
    for (std::string_view line : e.lines) {
        if (!line.empty()) text += "  " + std::string(line) + "\n";
    }
    return text + "\n" + std::string(kGlobalOptions);
}

class HelpFormatter : public CLI::Formatter {
public:
    // CLI11's own, less the lists of options this one needs or excludes.
    std::string make_option_opts(const CLI::Option* opt) const override {
        std::ostringstream out;
        if (!opt->get_option_text().empty()) {
            out << " " << opt->get_option_text();
        } else if (opt->get_type_size() != 0) {
            if (!opt->get_type_name().empty()) out << " " << get_label(opt->get_type_name());
            if (!opt->get_default_str().empty()) out << "=" << opt->get_default_str();
            if (opt->get_expected_max() == CLI::detail::expected_max_vector_size) {
                out << " ...";
            } else if (opt->get_expected_min() > 1) {
                out << " x " << opt->get_expected();
            }
            if (opt->get_required()) out << " " << get_label("REQUIRED");
        }
        return out.str();
    }
};

}  // namespace

std::shared_ptr<CLI::Formatter> help_formatter() {
    return std::make_shared<HelpFormatter>();
}

void add_help_footers(CLI::App& root) {
    root.footer(
        "Examples:\n  cumemctl doctor\n  cumemctl doctor --quick --format line\n  cumemctl devices\n\nRun 'cumemctl "
        "COMMAND --help' for a command's options, 'man cumemctl-COMMAND' for its "
        "page.\n" +
        std::string(kGlobalOptions));
    for (CLI::App* sub : root.get_subcommands([](const CLI::App* a) { return !a->get_group().empty(); })) {
        const Examples* found = nullptr;
        for (const Examples& e : kExamples) {
            if (e.command == sub->get_name()) found = &e;
        }
        if (found == nullptr) throw std::logic_error("no --help examples for command " + sub->get_name());
        sub->footer(footer(*found));
    }
}

std::string short_usage() {
    return "usage: cumemctl [GLOBAL OPTIONS] COMMAND [OPTIONS]\n"
           "\n"
           "What a node's CUDA memory system can do, and provisioning what it lacks. Common commands:\n"
           "  doctor       check that this node's CUDA memory system works (exit 1 on a failure)\n"
           "  devices      what each device's memory system supports\n"
           "  imex-setup   make, check or remove IMEX channel nodes\n"
           "  fleet        one summary of many nodes' reports\n"
           "  memtest      test every free byte of a GPU's memory\n"
           "\n"
           "Start with 'cumemctl doctor'. 'cumemctl --help' lists every command and the global options,\n"
           "'cumemctl COMMAND --help' a command's options, 'man cumemctl' the rest.\n";
}

}  // namespace cumemctl::cmd
