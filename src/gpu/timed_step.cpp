#include "gpu/timed_step.hpp"

namespace cumemctl {

nlohmann::json to_json(const TimedStep& step) {
    return {{"step", step.name}, {"call", step.call}, {"seconds", step.seconds}, {"ok", step.ok}};
}

TimedStep step_from_json(const nlohmann::json& j) {
    return {j.at("step").get<std::string>(), j.at("call").get<std::string>(), j.at("seconds").get<double>(),
            j.at("ok").get<bool>()};
}

}  // namespace cumemctl
