// --help in the tool's words: value names, not CLI11's type tags; "Commands:"; examples and the global
// options at the end of every command's help.
#include "help.hpp"

#include "command.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <sstream>
#include <stdexcept>
#include <string_view>

namespace cumemctl::cmd {
namespace {

// The global options, as every command's help names them (they go before or after the command).
constexpr std::string_view kGlobalOptions =
    "Global options (before or after the command): --json, --format FORMAT, --fields LIST, --libcuda PATH, "
    "--libnvml PATH, --no-color, --help, --version; see cumemctl(1).";

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
    {"bandwidth",
     {"cumemctl bandwidth", "cumemctl bandwidth --device 0 --size 1GiB --iterations 20 --pageable",
      "cumemctl bandwidth --format prometheus"}},
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

// CLI11's names of how a value is stored (TEXT, INT, FLOAT:NONNEGATIVE), which say nothing of what to
// give: an option that has one is shown with a value name of its own (below), never with these.
bool stored_type(std::string_view type) {
    static constexpr std::string_view kStored[] = {"TEXT", "INT", "UINT", "FLOAT", "NUMBER", "BOOLEAN", "CHAR"};
    return std::find(std::begin(kStored), std::end(kStored), type) != std::end(kStored);
}

// The value names of the options whose name alone does not say what to give (--keep SIZE, --passes N);
// any other option with only a stored type is shown with its own name in capitals (--size SIZE,
// --device DEVICE, --location LOCATION).
struct ValueName {
    std::string_view option;  // the long name, without its dashes
    std::string_view value;
};
constexpr ValueName kValueNames[] = {
    {"keep", "SIZE"},        {"offset", "SIZE"},
    {"mem-offset", "SIZE"},  {"bind-size", "SIZE"},
    {"max-size", "SIZE"},    {"release-threshold", "SIZE"},
    {"leave", "SIZE"},       {"chunk", "SIZE"},
    {"exercise", "NxSIZE"},  {"passes", "N"},
    {"rank", "N"},           {"ranks", "N"},
    {"channel", "N"},        {"seed", "N"},
    {"max-mismatches", "N"}, {"time", "SECONDS"},
    {"timeout", "SECONDS"},  {"owner", "USER[:GROUP]"},
    {"handle-type", "TYPE"}, {"proc-devices", "PATH"},
    {"params", "PATH"},      {"dev-root", "DIR"},
    {"patterns", "LIST"},    {"channels", "LIST"},
    {"run", "NAME"},
};

// The longest list of choices that --help spells out ({none,fabric}); a longer one is the value name,
// with the choices in the option's text and its man page.
constexpr std::size_t kLongestChoices = 24;

// The words of `text` in lines of at most `width` columns (a longer word alone on its line), the lines
// after the first indented by `indent`; `text` as it is where width is 0 (not a terminal: whole lines).
std::string wrapped(const std::string& text, std::size_t width, std::size_t indent) {
    if (width == 0 || indent + 20 > width) return text;  // a first column too wide for any text beside it
    std::istringstream words(text);
    std::string out, line;
    for (std::string word; words >> word;) {
        if (!line.empty() && indent + line.size() + 1 + word.size() > width) {
            out += line + "\n" + std::string(indent, ' ');
            line.clear();
        }
        line += (line.empty() ? "" : " ") + word;
    }
    return out + line;
}

class HelpFormatter : public CLI::Formatter {
public:
    // A row of an option or a command: its name in the first column, its text beside it, wrapped to the
    // terminal (under a long name, on the next line).
    std::string row(const std::string& left, const std::string& text) const {
        std::string out = "  " + left;
        if (text.empty()) return out + "\n";
        if (out.size() + 1 > column_width_) {
            out += "\n" + std::string(column_width_, ' ');
        } else {
            out += std::string(column_width_ - out.size(), ' ');
        }
        return out + wrapped(text, output_width(), column_width_) + "\n";
    }

    std::string make_option(const CLI::Option* opt, bool is_positional) const override {
        return row(make_option_name(opt, is_positional) + make_option_opts(opt), make_option_desc(opt));
    }

    // The footer's prose wrapped to the terminal; its example lines (indented) stay whole, to be copied.
    std::string make_footer(const CLI::App* app) const override {
        std::istringstream lines(app->get_footer());
        std::string out;
        for (std::string line; std::getline(lines, line);) {
            out += (line.rfind("  ", 0) == 0 ? line : wrapped(line, output_width(), 0)) + "\n";
        }
        return out;
    }

    std::string make_subcommand(const CLI::App* sub) const override {
        return row(sub->get_name(), sub->get_description());
    }

    // The value name, the default and "..." for an option that takes more than one: no type tags, no
    // REQUIRED (the usage line names the required options), no "Needs:" and "Excludes:" lists (the
    // option's own text and the man page say what goes with what; the parser still refuses the pairs).
    // A flag has no type name and shows nothing; a positional argument is its value name already.
    std::string make_option_opts(const CLI::Option* opt) const override {
        std::ostringstream out;
        if (!opt->get_option_text().empty()) {
            out << " " << opt->get_option_text();
        } else if (!opt->get_type_name().empty() && opt->get_type_size() != 0) {
            if (!opt->get_positional()) out << " " << value_name(*opt);
            if (!opt->get_default_str().empty()) out << "=" << opt->get_default_str();
            if (opt->get_expected_max() == CLI::detail::expected_max_vector_size) {
                out << " ...";
            } else if (opt->get_expected_min() > 1) {
                out << " x " << opt->get_expected();
            }
        }
        return out.str();
    }

    // "Usage: cumemctl COMMAND [OPTIONS]" for the program; a command's with its required options and
    // its arguments: "Usage: cumemctl le-bind --size SIZE [OPTIONS]", "Usage: cumemctl fleet [OPTIONS]
    // REPORTS...".
    std::string make_usage(const CLI::App* app, std::string name) const override {
        std::string line = "Usage: " + name;
        if (app->get_parent() == nullptr) return line + " COMMAND [OPTIONS]\n";
        for (const CLI::Option* opt : app->get_options()) {
            if (opt->nonpositional() && opt->get_required()) line += " " + opt->get_name() + make_option_opts(opt);
        }
        line += " [OPTIONS]";
        for (const CLI::Option* opt : app->get_options([](const CLI::Option* o) { return o->get_positional(); })) {
            std::string arg = value_name(*opt);
            if (opt->get_expected_max() >= CLI::detail::expected_max_vector_size) arg += "...";
            line += " " + (opt->get_required() ? arg : "[" + arg + "]");
        }
        return line + "\n";
    }

    // A positional argument by its value name (REPORTS, SHELL), as the usage line has it.
    std::string make_option_name(const CLI::Option* opt, bool is_positional) const override {
        return is_positional ? value_name(*opt) : CLI::Formatter::make_option_name(opt, is_positional);
    }

    // "Commands:", not CLI11's "Subcommands:", over the visible commands (hidden ones have no group).
    std::string make_subcommands(const CLI::App* app, CLI::AppFormatMode mode) const override {
        std::ostringstream out;
        const auto visible = app->get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); });
        if (visible.empty()) return {};
        out << "\nCommands:\n";
        for (const CLI::App* sub : visible) {
            out << (mode == CLI::AppFormatMode::All ? sub->help(sub->get_name(), CLI::AppFormatMode::Sub) + "\n"
                                                    : make_subcommand(sub));
        }
        return out.str();
    }
};

}  // namespace

std::string value_name(const CLI::Option& opt) {
    const std::string type = opt.get_type_name();
    const std::size_t colon = type.find(':');
    std::string base = type.substr(0, colon);
    std::string rest = colon == std::string::npos ? std::string() : type.substr(colon + 1);
    if (rest.size() >= 2 && rest.front() == '{' && rest.back() == '}' && rest.size() <= kLongestChoices) return rest;
    const std::string name = opt.get_lnames().empty() ? opt.get_name(true) : opt.get_lnames().front();
    if (!base.empty() && !stored_type(base) && !opt.get_positional()) return base;
    for (const ValueName& v : kValueNames) {
        if (v.option == name) return std::string(v.value);
    }
    std::string upper = name;
    for (char& c : upper) c = c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return upper;
}

std::shared_ptr<CLI::Formatter> help_formatter() {
    auto formatter = std::make_shared<HelpFormatter>();
    formatter->label("Positionals", "Arguments");
    return formatter;
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
    return "Usage: cumemctl COMMAND [OPTIONS]\n"
           "\n"
           "What a node's CUDA memory system can do, and provisioning what it lacks. Common commands:\n"
           "  doctor       check that this node's CUDA memory system works (exit 1 on a failure)\n"
           "  devices      what each device's memory system supports\n"
           "  imex-setup   make, check or remove IMEX channel nodes\n"
           "  fleet        one summary of many nodes' reports\n"
           "  memtest      test every free byte of a GPU's memory\n"
           "  bandwidth    each memory path's speed against its physical limit\n"
           "\n"
           "Start with 'cumemctl doctor'. 'cumemctl --help' lists every command and the global options,\n"
           "'cumemctl COMMAND --help' a command's options, 'man cumemctl' the rest.\n";
}

}  // namespace cumemctl::cmd
