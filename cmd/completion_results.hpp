// What `cumemctl completion` answers: the shell and the script written for it.
#pragma once

#include <string>
#include <utility>

#include "report/results.hpp"

namespace cumemctl::cmd {

class CompletionResults final : public Results {
public:
    std::string shell;   // bash or zsh
    std::string script;  // the completion script, as the table output writes it

    CompletionResults(std::string sh, std::string text) : shell(std::move(sh)), script(std::move(text)) {}
    // {"shell", "script"}
    nlohmann::json to_json() const override;
    // The script, written as is.
    std::string text() const override { return script; }
};

}  // namespace cumemctl::cmd
