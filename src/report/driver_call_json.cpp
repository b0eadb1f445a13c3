#include "report/driver_call_json.hpp"

#include <nlohmann/json.hpp>

namespace cumemctl {

nlohmann::json to_json(const DriverFailure& failure) {
    return {{"call", failure.call}, {"result", failure.code}, {"name", failure.name}, {"text", failure.text}};
}

std::string driver_call_json_text(const DriverFailure& failure) {
    return to_json(failure).dump();
}

}  // namespace cumemctl
