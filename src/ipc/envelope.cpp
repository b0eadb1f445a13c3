#include "ipc/envelope.hpp"

#include "base/pending.hpp"

#include <fmt/format.h>

#include "ipc/problem_wire.hpp"
#include "steps/step_json.hpp"
#include "util/unix_socket.hpp"

namespace cumemctl::ipc {

nlohmann::json to_json(const Envelope& envelope) {
    return {{"steps", steps::steps_json(envelope.steps)},
            {"problem", envelope.problem ? problem_to_json(*envelope.problem) : nlohmann::json(nullptr)},
            {"result", envelope.result}};
}

Envelope envelope_from_json(const nlohmann::json& j) {
    try {
        Envelope e;
        e.steps = steps::steps_from_json(j.at("steps"));
        if (!j.at("problem").is_null()) e.problem = problem_from_json(j.at("problem"));
        e.result = j.at("result");
        return e;
    } catch (const nlohmann::json::exception& ex) {
        throw Error(ExitCode::failed,
                    fmt::format("internal error: a malformed message from the other process: {}", ex.what()));
    }
}

void send_envelope(int socket, const Envelope& envelope, int fd) {
    send_message(socket, to_json(envelope).dump(), fd);
}

namespace {

Envelope parse_envelope(Message m) {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(m.bytes);
    } catch (const nlohmann::json::exception& ex) {
        throw Error(ExitCode::failed, fmt::format("internal error: a message that is not JSON: {}", ex.what()));
    }
    Envelope e = envelope_from_json(j);
    e.fd = std::move(m.fd);
    return e;
}

}  // namespace

Envelope receive_envelope(int socket, Timeout timeout) {
    const Pending pending("the second process's answer");
    return parse_envelope(receive_message(socket, timeout));
}

std::optional<Envelope> receive_envelope_or_end(int socket, Timeout timeout) {
    const Pending pending("the second process's answer");
    std::optional<Message> m = receive_message_or_end(socket, timeout);
    if (!m) return std::nullopt;
    return parse_envelope(std::move(*m));
}

}  // namespace cumemctl::ipc
