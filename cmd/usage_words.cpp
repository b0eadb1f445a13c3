#include "usage_words.hpp"

#include <regex>

#include <fmt/format.h>

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
        if (arg.rfind("-", 0) == 0) {
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

// CLI11's message for the kinds that carry no more than a name and a number, told again.
Problem retold(const CLI::ParseError& error, const CLI::App* command) {
    const std::string what = error.what();
    const std::string help = help_of(command);
    std::smatch m;
    if (std::regex_match(what, m, std::regex(R"((\S+): \d+ required (\S+) missing)"))) {
        const std::string type = m[2].str().substr(0, m[2].str().find(':'));  // LIST, not LIST:{all,...}
        return usage(fmt::format("{} needs a value ({})", m[1].str(), type), help);
    }
    if (std::regex_match(what, m, std::regex(R"((\S+): At Most (\d+) required but received (\d+))"))) {
        return usage(fmt::format("{} takes {} value{}, not {}", m[1].str(), m[2].str(), m[2].str() == "1" ? "" : "s",
                                 m[3].str()),
                     help);
    }
    if (std::regex_match(what, m, std::regex(R"(Could not convert: (\S+) = (.*))"))) {
        return usage(fmt::format("invalid {} '{}': not a number", m[1].str(), m[2].str()), help);
    }
    if (std::regex_match(what, m, std::regex(R"((\S+): (.*) not in \{(.*)\})"))) {
        std::vector<std::string> allowed;
        std::stringstream list(m[3].str());
        for (std::string item; std::getline(list, item, ',');) allowed.push_back(item);
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
        return usage("no command given", list);
    }
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
                const std::string name = o->get_positional() ? o->get_name(true) : o->get_name();
                std::string upper = name;
                for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
                if (!o->get_positional()) {
                    return usage(fmt::format("{} is required: {}", name, o->get_description()), help_of(command));
                }
                return usage(fmt::format("{} needs {}: {}", command->get_name(), upper, o->get_description()),
                             help_of(command));
            }
        }
    }
    return retold(error, command);
}

}  // namespace cumemctl::cmd
