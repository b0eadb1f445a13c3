// Messages over a connected pair of Unix sockets (SOCK_SEQPACKET: one send is one receive), with a
// file descriptor passed alongside where asked (SCM_RIGHTS). How create hands an exported handle to
// the process that imports it, and how that process reports back.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "base/error.hpp"
#include "util/unique_fd.hpp"

namespace cumemctl {

// A connected pair of sockets, both close-on-exec. Throws Error (failed) when the system refuses.
std::pair<UniqueFd, UniqueFd> socket_pair();

// Sends `bytes` (at least one byte) as one message, with `fd` attached when it is not -1. Throws Error
// (failed) when the message cannot be sent (the peer has gone, for one).
void send_message(int socket, std::string_view bytes, int fd = -1);

// Says that this end sends no more (shutdown SHUT_WR): the peer's next receive finds the end, while
// this end can still receive; the peer can end in turn. Never throws.
void end_sending(int socket) noexcept;

// One received message: its bytes, and the descriptor that came with it (owned; close-on-exec).
struct Message {
    std::string bytes;
    UniqueFd fd;
};

// No message came within the time allowed: an Error (failed, "no message within N s") that a caller
// tells apart from the peer's end by its type.
class MessageTimeout : public Error {
public:
    explicit MessageTimeout(std::chrono::milliseconds waited);
};

// Receives one message, waiting at most `timeout` (ipc::Timeout). Throws MessageTimeout on a timeout,
// Error (failed) when the peer closed its end without sending, or on a system error.
Message receive_message(int socket, std::chrono::milliseconds timeout);
// The same, where the peer closing its end without sending is an answer too (nullopt): for a process
// that serves requests until its parent has none left.
std::optional<Message> receive_message_or_end(int socket, std::chrono::milliseconds timeout);

}  // namespace cumemctl
