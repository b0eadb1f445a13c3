// What `cumemctl --version --json` answers: the tool's version and the commit it was built from.
#pragma once

#include <string>
#include <utility>

#include "report/results.hpp"

namespace cumemctl::cmd {

class VersionResults final : public Results {
public:
    std::string version;  // "0.9.0"
    std::string commit;   // the git commit, as --version prints it

    VersionResults(std::string v, std::string c) : version(std::move(v)), commit(std::move(c)) {}
    // {"version", "commit"}
    nlohmann::json to_json() const override;
};

}  // namespace cumemctl::cmd
