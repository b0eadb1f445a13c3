#include "ipc/problem_wire.hpp"

#include "report/report.hpp"

namespace cumemctl::ipc {

nlohmann::json problem_to_json(const Problem& problem) {
    return to_json(problem);
}

Problem problem_from_json(const nlohmann::json& j) {
    Problem p;
    p.message = j.at("message").get<std::string>();
    p.cause = j.at("cause").get<std::string>();
    p.remedy = j.at("remedy").get<std::string>();
    p.exit_code = static_cast<ExitCode>(j.at("exit_code").get<int>());
    if (j.contains("device")) p.device = j["device"].get<int>();
    if (j.contains("driver_call")) {
        const auto& d = j["driver_call"];
        p.driver = DriverFailure{d.at("call").get<std::string>(), d.at("result").get<int>(),
                                 d.at("name").get<std::string>(), d.at("text").get<std::string>()};
    }
    return p;
}

}  // namespace cumemctl::ipc
