#include "version_results.hpp"

#include <nlohmann/json.hpp>

namespace cumemctl::cmd {

nlohmann::json VersionResults::to_json() const {
    return {{"version", version}, {"commit", commit}};
}

}  // namespace cumemctl::cmd
