#include "completion_results.hpp"

#include <nlohmann/json.hpp>

namespace cumemctl::cmd {

nlohmann::json CompletionResults::to_json() const {
    return {{"shell", shell}, {"script", script}};
}

}  // namespace cumemctl::cmd
