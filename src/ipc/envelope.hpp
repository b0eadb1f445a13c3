// The two messages between our processes, over a Unix socket (util/unix_socket: one send is one
// receive, a descriptor alongside with SCM_RIGHTS). A request (parent to child) names the service it
// asks for and what it asks: {"service", "fields"}. An answer, the envelope (child to parent), carries
// the child's steps, the problem that stopped it (the one Problem wire format) and what it found:
// {"steps", "problem", "result"}. Each side decodes only its own kind: one sent as the other is
// malformed.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ipc/timeout.hpp"
#include "base/error.hpp"
#include "steps/step.hpp"
#include "util/unique_fd.hpp"

namespace cumemctl::ipc {

// A request: what a parent asks a child's service. (clang-tidy: as Envelope below.)
struct Request {                                       // NOLINT(bugprone-exception-escape)
    std::string service;                               // which service answers
    nlohmann::json fields = nlohmann::json::object();  // what it asks
    UniqueFd fd;                                       // a descriptor that came with it (received only)
};

nlohmann::json to_json(const Request& request);
// A request from its JSON; throws Error (failed) when malformed.
Request request_from_json(const nlohmann::json& j);

// Sends `request` as one message, with `fd` attached when it is not -1. Throws Error (failed).
void send_request(int socket, const Request& request, int fd = -1);
// Receives one request, waiting at most `timeout`. Throws Error (failed) on a timeout, a closed peer
// or a malformed message.
Request receive_request(int socket, Timeout timeout);
// The same, where the peer closing its end without a message is an answer (nullopt): how a process
// serving a sequence of requests learns that none is left.
std::optional<Request> receive_request_or_end(int socket, Timeout timeout);

// An answer. (clang-tidy sees its implicit destructor as able to throw: nlohmann::json's destructor
// collects nested values in a vector. It cannot throw but for lack of memory.)
struct Envelope {                    // NOLINT(bugprone-exception-escape)
    std::vector<steps::Step> steps;  // what the sender did, in order
    std::optional<Problem> problem;  // why it stopped, if it did
    nlohmann::json result;           // what it found; null when nothing
    UniqueFd fd;                     // a descriptor that came with it (received only)
};

nlohmann::json to_json(const Envelope& envelope);
// An envelope from its JSON; throws Error (failed) when malformed.
Envelope envelope_from_json(const nlohmann::json& j);

// Sends `envelope` as one message, with `fd` attached when it is not -1. Throws Error (failed).
void send_envelope(int socket, const Envelope& envelope, int fd = -1);
// Receives one envelope, waiting at most `timeout`. Throws Error (failed) on a timeout, a closed
// peer or a malformed message.
Envelope receive_envelope(int socket, Timeout timeout);

}  // namespace cumemctl::ipc
