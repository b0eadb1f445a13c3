#include "usage_words.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <regex>

#include <fmt/format.h>

#include "help.hpp"
#include "util/comma_list.hpp"
#include "util/suggest.hpp"

namespace cumemctl::cmd {
namespace {

Problem usage(std::string message, std::string remedy) {
    Problem p;
    p.exit_code = ExitCode::usage;
    p.message = std::move(message);
    p.remedy = std::move(remedy);
    return p;
}

// Every spelling of the options of `app` ("--checks", "-d").
std::vector<std::string> option_names(const CLI::App& app) {
    std::vector<std::string> names;
    for (const CLI::Option* o : app.get_options()) {
        for (const auto& l : o->get_lnames()) names.push_back("--" + l);
        for (const auto& s : o->get_snames()) names.push_back("-" + s);
    }
    return names;
}

// Whether root option `arg` takes the next argument as its value (--format json, --libcuda PATH).
bool takes_value(const CLI::App& app, std::string_view arg) {
    if (arg.find('=') != std::string_view::npos) return false;
    for (const CLI::Option* o : app.get_options()) {
        if (o->get_type_size_max() == 0) continue;  // a flag
        for (const auto& l : o->get_lnames()) {
            if (arg == "--" + l) return true;
        }
    }
    return false;
}

// The first argument that looks like an option (--name, -x) and that neither the command nor the
// root knows, as typed without its "=value".
std::optional<std::string> unknown_option(const CLI::App& root, const CLI::App* command, int argc, char** argv) {
    std::vector<std::string> known = option_names(root);
    if (command != nullptr) {
        const auto own = option_names(*command);
        known.insert(known.end(), own.begin(), own.end());
    }
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg == "--") break;
        const bool looks =
            (arg.size() > 2 && arg.rfind("--", 0) == 0 && std::isalpha(static_cast<unsigned char>(arg[2]))) ||
            (arg.size() == 2 && arg[0] == '-' && std::isalpha(static_cast<unsigned char>(arg[1])));
        if (!looks) continue;
        arg = arg.substr(0, arg.find('='));
        if (std::find(known.begin(), known.end(), arg) == known.end()) return arg;
    }
    return std::nullopt;
}

// The first argument that is not an option or a root option's value: the command as typed.
std::optional<std::string> first_word(const CLI::App& root, int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg.starts_with('-')) {
            if (takes_value(root, arg)) ++i;
            continue;
        }
        return std::string(arg);
    }
    return std::nullopt;
}

std::string help_of(const CLI::App* command) {
    return command == nullptr ? "'cumemctl --help' lists the commands"
                              : fmt::format("'cumemctl {} --help' lists its options", command->get_name());
}

// The option of the command or the root that `name` ("--device", "-d") names, or null.
const CLI::Option* option_named(const CLI::App& root, const CLI::App* command, const std::string& name) {
    for (const CLI::App* app : {command, &root}) {
        if (app == nullptr) continue;
        for (const CLI::Option* o : app->get_options()) {
            if (o->check_name(name)) return o;
        }
    }
    return nullptr;
}

// "--device needs a value (DEVICE)", with what the option takes as the cause.
Problem missing_value(const std::string& name, const CLI::App& root, const CLI::App* command) {
    const CLI::Option* o = option_named(root, command, name);
    if (o == nullptr) return usage(fmt::format("{} needs a value", name), help_of(command));
    Problem p = usage(fmt::format("{} needs a value ({})", name, value_name(*o)), help_of(command));
    if (!o->get_description().empty()) p.cause = fmt::format("{} {}: {}", name, value_name(*o), o->get_description());
    return p;
}

// A word as the shell needs it typed again: in single quotes where it holds anything but letters,
// digits and -_./:,=@%+.
std::string shell_word(const std::string& word) {
    const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
               std::string_view("-_./:,=@%+").find(c) != std::string_view::npos;
    });
    if (plain) return word;
    std::string out = "'";
    for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

// An option of the command typed before the command's name (`cumemctl --device 0 devices`): only the
// global options go there. The usage error names it and gives the command line with it after the
// command; nullopt when there is none.
std::optional<Problem> command_option_first(const CLI::App& root, const CLI::App& command, int argc, char** argv) {
    int at = 0;
    for (int i = 1; i < argc && at == 0; ++i) {
        if (command.check_name(argv[i])) at = i;
    }
    const auto root_names = option_names(root);
    const auto own = option_names(command);
    for (int i = 1; i < at; ++i) {
        std::string arg = argv[i];
        arg = arg.substr(0, arg.find('='));
        if (std::find(root_names.begin(), root_names.end(), arg) != root_names.end() ||
            std::find(own.begin(), own.end(), arg) == own.end())
            continue;
        std::string line = "cumemctl " + shell_word(argv[at]);
        for (int j = 1; j < argc; ++j) {
            if (j != at) line += " " + shell_word(argv[j]);
        }
        return usage(fmt::format("{} is an option of {}: it goes after the command", arg, command.get_name()),
                     fmt::format("only the global options come before the command: {}", line));
    }
    return std::nullopt;
}

// CLI11's message for the kinds that carry no more than a name and a number, told again.
Problem retold(const CLI::ParseError& error, const CLI::App& root, const CLI::App* command) {
    const std::string what = error.what();
    const std::string help = help_of(command);
    std::smatch m;
    if (std::regex_match(what, m, std::regex(R"((\S+): \d+ required .* missing)"))) {
        return missing_value(m[1].str(), root, command);
    }
    if (std::regex_match(what, m, std::regex(R"((\S+): At Most (\d+) required but received (\d+))"))) {
        return usage(fmt::format("{} takes {} value{}, not {}", m[1].str(), m[2].str(), m[2].str() == "1" ? "" : "s",
                                 m[3].str()),
                     help);
    }
    if (std::regex_match(what, m, std::regex(R"(Could not convert: (\S+) = (.*))"))) {
        // An option's default from the environment (doctor --timeout's CUMEMCTL_DOCTOR_TIMEOUT) is named as such.
        const CLI::Option* option = command != nullptr ? command->get_option_no_throw(m[1].str()) : nullptr;
        const std::string env = option != nullptr ? option->get_envname() : std::string();
        const char* env_value = env.empty() ? nullptr : std::getenv(env.c_str());
        if (env_value != nullptr && m[2].str() == env_value) {
            return usage(fmt::format("invalid {} '{}' (the default of {}): not a number", env, m[2].str(), m[1].str()),
                         fmt::format("unset {} or set it to a number of seconds", env));
        }
        return usage(fmt::format("invalid {} '{}': not a number", m[1].str(), m[2].str()), help);
    }
    if (std::regex_match(what, m, std::regex(R"((\S+): (.*) not in \{(.*)\})"))) {
        std::vector<std::string> allowed;
        const std::string list = m[3].str();
        for (const std::string_view item : split_commas(list)) allowed.emplace_back(item);
        return usage(fmt::format("invalid {} '{}'{}", m[1].str(), m[2].str(), did_you_mean(m[2].str(), allowed)),
                     fmt::format("give one of {}", fmt::join(allowed, ", ")));
    }
    if (std::regex_match(what, m, std::regex(R"((\S+): Value (\S+) not in range (\S+) to (\S+))"))) {
        return usage(fmt::format("invalid {} {}: from {} to {}", m[1].str(), m[2].str(), m[3].str(), m[4].str()), help);
    }
    if (std::regex_match(what, m, std::regex(R"((\S+) excludes (\S+))"))) {
        return usage(fmt::format("{} and {} cannot be given together", m[1].str(), m[2].str()),
                     "give one of them; " + help);
    }
    if (std::regex_match(what, m, std::regex(R"((\S+) requires (\S+))"))) {
        return usage(fmt::format("{} needs {}", m[1].str(), m[2].str()), help);
    }
    return usage(what, help);
}

}  // namespace

bool help_for_unknown_command(const CLI::ParseError& error, const CLI::App& app, int argc, char** argv) {
    const bool help = dynamic_cast<const CLI::CallForHelp*>(&error) != nullptr ||
                      dynamic_cast<const CLI::CallForAllHelp*>(&error) != nullptr;
    if (!help || !app.get_subcommands().empty()) return false;
    const auto word = first_word(app, argc, argv);
    if (!word) return false;
    const auto commands = app.get_subcommands([](const CLI::App*) { return true; });
    return std::none_of(commands.begin(), commands.end(), [&](const CLI::App* c) { return c->check_name(*word); });
}

std::vector<std::string> visible_commands(const CLI::App& app) {
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); })) {
        names.push_back(sub->get_name());
    }
    return names;
}

Problem usage_problem(const CLI::ParseError& error, const CLI::App& app, int argc, char** argv) {
    const auto parsed = app.get_subcommands();
    const CLI::App* command = parsed.empty() ? nullptr : parsed.front();
    const auto commands = visible_commands(app);
    if (command == nullptr) {
        const auto word = first_word(app, argc, argv);
        const std::string list =
            fmt::format("the commands: {}; 'cumemctl --help' says what each does", fmt::join(commands, ", "));
        if (word) return usage(fmt::format("unknown command '{}'{}", *word, did_you_mean(*word, commands)), list);
        if (auto option = unknown_option(app, nullptr, argc, argv)) {
            return usage(fmt::format("unknown option '{}'{}", *option, did_you_mean(*option, option_names(app))),
                         help_of(nullptr));
        }
        // `cumemctl --libcuda`: the option took the place of the command and found no value.
        if (dynamic_cast<const CLI::ArgumentMismatch*>(&error) != nullptr) return retold(error, app, nullptr);
        // `cumemctl --libcuda devices`: the option took the command as its value.
        for (int i = 1; i + 1 < argc; ++i) {
            const std::string value = argv[i + 1];
            if (!takes_value(app, argv[i]) || std::find(commands.begin(), commands.end(), value) == commands.end())
                continue;
            const CLI::Option* o = option_named(app, nullptr, argv[i]);
            return usage(fmt::format("no command given: {} took '{}' as its {}", argv[i], value,
                                     o == nullptr ? std::string("value") : value_name(*o)),
                         fmt::format("give {} a value before the command", argv[i]));
        }
        return usage("no command given", list);
    }
    if (auto first = command_option_first(app, *command, argc, argv)) return *first;
    if (auto option = unknown_option(app, command, argc, argv)) {
        std::vector<std::string> known = option_names(*command);
        const auto root = option_names(app);
        known.insert(known.end(), root.begin(), root.end());
        return usage(
            fmt::format("unknown option '{}' for {}{}", *option, command->get_name(), did_you_mean(*option, known)),
            help_of(command));
    }
    if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr) {
        // The first extra argument: CLI11 lists them after the colon of its message.
        const std::string what = error.what();
        const auto colon = what.find(": ");
        std::string word = colon == std::string::npos ? what : what.substr(colon + 2);
        word = word.substr(0, word.find(' '));
        return usage(fmt::format("unexpected argument '{}' for {}", word, command->get_name()), help_of(command));
    }
    if (dynamic_cast<const CLI::RequiredError*>(&error) != nullptr) {
        for (const CLI::Option* o : command->get_options()) {
            if (o->get_required() && o->count() == 0) {
                if (!o->get_positional()) {
                    return usage(fmt::format("{} is required: {}", o->get_name(), o->get_description()),
                                 help_of(command));
                }
                return usage(fmt::format("{} needs {}: {}", command->get_name(), value_name(*o), o->get_description()),
                             help_of(command));
            }
        }
    }
    return retold(error, app, command);
}

}  // namespace cumemctl::cmd
