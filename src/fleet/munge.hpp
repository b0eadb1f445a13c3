// MUNGE, loaded at run time: who made a report. A MUNGE credential (munge(1): "MUNGE:" base64 ":")
// carries a payload with the uid and gid that encoded it, the IPv4 address of the host whose munged
// encoded it and the time it did (munge(3), unmunge(1)); munged checks it with the cluster's shared key.
// libmunge is opened by its soname (libmunge.so.2) when a credential is read, as the driver is, so
// the binary links nothing of it; the few entry points and enums it uses are declared here, from
// munge.h's public ABI (munge 0.5), because no munge.h is needed where cumemctl builds.
#pragma once

#include <cstdint>
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/unique_fd.hpp"

namespace cumemctl::fleet {

// munge_err_t: the decode errors fleet tells apart (munge.h).
enum class MungeError : int {
    success = 0,
    snafu = 1,
    bad_arg = 2,
    bad_length = 3,
    overflow = 4,
    no_memory = 5,
    socket = 6,
    timeout = 7,
    bad_cred = 8,
    bad_version = 9,
    bad_cipher = 10,
    bad_mac = 11,
    bad_zip = 12,
    bad_realm = 13,
    cred_invalid = 14,
    cred_expired = 15,
    cred_rewound = 16,
    cred_replayed = 17,
    cred_unauthorized = 18,
};

// What a credential proves, once munged has checked it.
struct MungeProof {
    std::uint32_t uid = 0, gid = 0;
    std::uint32_t origin = 0;  // the encoding host's IPv4 address, in network byte order (0: unknown)
    std::time_t encoded = 0;   // when it was encoded, by that host's clock
};

// What decoding one credential gave.
struct MungeDecoded {
    MungeError error = MungeError::success;
    std::string message;              // munge_strerror's words, where not success
    std::string payload;              // the payload, where munged handed one over
    std::optional<MungeProof> proof;  // where munged vouches for the credential (see accepted())
};

// Whether fleet takes a decode result's payload as made by its proof's uid on its origin host:
// success, and the three errors that munge(3) says still hand over a checked credential. Replayed (it
// was decoded before: fleet run twice over the same files) and expired (older than the credential's
// time to live, 5 minutes by default: reports are summarised later) are accepted, their age judged by
// the encode time; rewound (encoded in the future by the decoding host's clock) is not.
bool accepted(MungeError error);

// How a credential's text starts (munge(1) writes "MUNGE:", base64, ":").
inline constexpr std::string_view kMungePrefix = "MUNGE:";

// libmunge, loaded once; a decoder bound to one munged socket.
class Munge {
public:
    // Loads libmunge.so.2 (`library` to name another, for tests). Throws std::runtime_error saying why
    // where it cannot be loaded or lacks an entry point. Judged as root, a `socket` that is given is
    // reached only through its folder, opened once and kept: a folder that only root or the munge
    // account can change, the socket in it theirs too; else Error (permission, exit 4), since whoever
    // answers on that socket vouches for every report.
    explicit Munge(const std::string& socket = {}, const std::string& library = "libmunge.so.2");
    ~Munge();
    Munge(const Munge&) = delete;
    Munge& operator=(const Munge&) = delete;

    // Decodes one credential (its text, "MUNGE:...:").
    MungeDecoded decode(std::string_view credential) const;

    // Whether munged answers on the socket: encodes an empty credential. "" where it does, else why not.
    std::string reachable() const;

    struct Api;  // libmunge's entry points (munge.cpp)

private:
    std::unique_ptr<Api> api_;
    void* handle_ = nullptr;
    UniqueFd socket_folder_;  // the given socket's folder, where it was opened once (judged as root)
    std::string socket_;      // as libmunge is given it: through that folder's descriptor, where open
};

// The IPv4 addresses of host `name` (getaddrinfo), in network byte order; empty where it resolves to none.
std::vector<std::uint32_t> host_addresses(const std::string& name);

}  // namespace cumemctl::fleet
