// `cumemctl completion bash|zsh`: writes a completion script generated from the command definitions.
#include "completion.hpp"

#include <fmt/format.h>

#include "command.hpp"
#include "completion_results.hpp"

namespace cumemctl::cmd {
namespace {

// Words between the braces of a type name such as "TEXT:{table,json}" or "LIST:{a,b}".
std::vector<std::string> braced_words(const std::string& type) {
    std::vector<std::string> words;
    const auto open = type.find('{');
    const auto close = type.rfind('}');
    if (open == std::string::npos || close == std::string::npos || close < open) return words;
    std::string word;
    for (char c : type.substr(open + 1, close - open - 1)) {
        if (c == ',') {
            if (!word.empty()) words.push_back(word);
            word.clear();
        } else if (c != ' ') {
            word += c;
        }
    }
    if (!word.empty()) words.push_back(word);
    return words;
}

ValueSpec value_of(const CLI::Option& opt) {
    ValueSpec v;
    v.takes_value = opt.get_items_expected_max() > 0;
    if (!v.takes_value) return v;
    const std::string type = opt.get_type_name();
    v.choices = braced_words(type);
    v.list = type.rfind("LIST", 0) == 0;
    v.path = type.rfind("PATH", 0) == 0 || type.rfind("FILE", 0) == 0 || type.rfind("DIR", 0) == 0;
    v.many = opt.get_items_expected_max() > 1;
    v.name = opt.get_lnames().empty() ? opt.get_name() : opt.get_lnames().front();
    return v;
}

// The named options of `app`; a subcommand's own -h/--help is left out (the program's is global).
std::vector<OptionSpec> options_of(const CLI::App& app, bool skip_help) {
    std::vector<OptionSpec> out;
    for (const CLI::Option* opt : app.get_options()) {
        if (!opt->nonpositional() || (skip_help && opt == app.get_help_ptr())) continue;
        if (opt->get_group().empty()) continue;  // hidden
        OptionSpec o;
        for (const auto& s : opt->get_snames()) o.names.push_back("-" + s);
        for (const auto& l : opt->get_lnames()) o.names.push_back("--" + l);
        o.help = opt->get_description();
        o.value = value_of(*opt);
        out.push_back(std::move(o));
    }
    return out;
}

struct CompletionOptions {
    std::string shell;
};

Report run_completion(const CompletionOptions& opts, const CLI::App& root) {
    return run_guarded("completion", [&](Report& report) {
        const CliSpec cli = describe_cli(root);
        report.set_results(
            CompletionResults(opts.shell, opts.shell == "zsh" ? zsh_completion(cli) : bash_completion(cli)));
    });
}

}  // namespace

CliSpec describe_cli(const CLI::App& root) {
    CliSpec cli;
    cli.program = root.get_name();
    cli.globals = options_of(root, false);
    // Hidden subcommands (an empty group, like the second process of create --import-check) are left out.
    for (const CLI::App* sub : root.get_subcommands([](const CLI::App* a) { return !a->get_group().empty(); })) {
        CommandSpec c;
        c.name = sub->get_name();
        c.help = sub->get_description();
        c.options = options_of(*sub, true);
        for (const CLI::Option* opt : sub->get_options()) {
            if (!opt->nonpositional()) c.positionals.push_back(value_of(*opt));
        }
        cli.commands.push_back(std::move(c));
    }
    return cli;
}

void register_completion(CLI::App& root, const Globals&, Runner& runner) {
    auto opts = std::make_shared<CompletionOptions>();
    CLI::App* app = root.add_subcommand("completion", "write a bash or zsh completion script to stdout");
    app->add_option("shell", opts->shell, "the shell: bash or zsh")->required()->check(CLI::IsMember({"bash", "zsh"}));
    app->callback([opts, &root, &runner] { runner = [opts, &root] { return run_completion(*opts, root); }; });
}

}  // namespace cumemctl::cmd
