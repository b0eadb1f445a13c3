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
        throw Error(internal_error(fmt::format("a malformed message from the other process: {}", ex.what())));
    }
}

nlohmann::json to_json(const Request& request) {
    return {{"service", request.service}, {"fields", request.fields}};
}

Request request_from_json(const nlohmann::json& j) {
    try {
        Request r;
        r.service = j.at("service").get<std::string>();
        r.fields = j.at("fields");
        if (!r.fields.is_object()) throw Error(internal_error("a malformed request: fields that are not an object"));
        return r;
    } catch (const nlohmann::json::exception& ex) {
        throw Error(internal_error(fmt::format("a malformed request from the other process: {}", ex.what())));
    }
}

void send_request(int socket, const Request& request, int fd) {
    send_message(socket, to_json(request).dump(), fd);
}

void send_envelope(int socket, const Envelope& envelope, int fd) {
    send_message(socket, to_json(envelope).dump(), fd);
}

namespace {

// A received message as a request or an envelope (`decode`), with its descriptor.
template <class T>
T parse_message(Message m, T (*decode)(const nlohmann::json&)) {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(m.bytes);
    } catch (const nlohmann::json::exception& ex) {
        throw Error(internal_error(fmt::format("a message that is not JSON: {}", ex.what())));
    }
    T t = decode(j);
    t.fd = std::move(m.fd);
    return t;
}

}  // namespace

Envelope receive_envelope(int socket, Timeout timeout) {
    const Pending pending("the second process's answer");
    return parse_message(receive_message(socket, timeout), envelope_from_json);
}

Request receive_request(int socket, Timeout timeout) {
    const Pending pending("the first process's request");
    return parse_message(receive_message(socket, timeout), request_from_json);
}

std::optional<Request> receive_request_or_end(int socket, Timeout timeout) {
    const Pending pending("the first process's request");
    std::optional<Message> m = receive_message_or_end(socket, timeout);
    if (!m) return std::nullopt;
    return parse_message(std::move(*m), request_from_json);
}

}  // namespace cumemctl::ipc
