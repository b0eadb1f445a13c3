#include "fleet/munge.hpp"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "base/error.hpp"
#include "util/trusted_file.hpp"

namespace cumemctl::fleet {
namespace {

// munge_opt_t's values that fleet sets or reads (munge.h).
constexpr int kOptAddr4 = 5;
constexpr int kOptEncodeTime = 6;
constexpr int kOptSocket = 8;

// The uid of the account that munged runs as (Debian's and EPEL's packages: munge), or root's.
uid_t munge_account() {
    passwd entry{};
    passwd* found = nullptr;
    std::string buffer(16384, '\0');
    if (getpwnam_r("munge", &entry, buffer.data(), buffer.size(), &found) == 0 && found != nullptr)
        return found->pw_uid;
    return 0;
}

[[noreturn]] void refuse_socket(const std::string& socket, const std::string& what, const std::string& why) {
    throw Error(Problem{.exit_code = ExitCode::permission,
                        .message = fmt::format("refusing --munge-socket {}: {} {}", socket, what, why),
                        .cause = "whoever answers on munged's socket vouches for every signed report; as root, "
                                 "cumemctl reaches only one that no user but root or munged's account could place",
                        .remedy = "name munged's own socket (/run/munge/munge.socket.2), or leave --munge-socket "
                                  "out for libmunge's default"});
}

// The folder of `socket`, opened once (judged as root's, or munged's account's) and the socket checked
// in it: its descriptor, kept while the socket is used; none where the folder is missing.
UniqueFd open_socket_folder(const std::string& socket, const std::string& folder, const std::string& name) {
    const uid_t munge = munge_account();
    CheckedOpen opened = open_checked(folder, Check::everything, Links::follow, true, munge);
    if (opened.unsafe) refuse_socket(socket, opened.unsafe->path, opened.unsafe->why);
    // Missing where only root could make it: munged does not answer there, as libmunge will say.
    if (!opened.fd.valid()) return {};
    UniqueFd here = std::move(opened.fd);
    struct stat sock {};
    if (::fstatat(here.get(), name.c_str(), &sock, AT_SYMLINK_NOFOLLOW) == 0) {
        if (S_ISLNK(sock.st_mode)) refuse_socket(socket, socket, "is a symbolic link: name the socket itself");
        if (!S_ISSOCK(sock.st_mode)) refuse_socket(socket, socket, "is not a socket");
        if (sock.st_uid != 0 && sock.st_uid != munge) {
            refuse_socket(socket, socket, fmt::format("belongs to uid {}", sock.st_uid));
        }
    }
    return here;
}

}  // namespace

struct MungeCtx;  // munge_ctx_t's opaque struct

// The entry points of libmunge that fleet calls, with munge.h's signatures.
struct Munge::Api {
    MungeCtx* (*ctx_create)();
    void (*ctx_destroy)(MungeCtx*);
    int (*ctx_set)(MungeCtx*, int, ...);
    int (*ctx_get)(MungeCtx*, int, ...);
    int (*decode)(const char*, MungeCtx*, void**, int*, uid_t*, gid_t*);
    int (*encode)(char**, MungeCtx*, const void*, int);
    const char* (*strerror)(int);
};

namespace {

// A context for one call, with the socket set where one was given; destroyed on every path.
struct Context {
    const Munge::Api& api;
    MungeCtx* ctx;
    Context(const Munge::Api& a, const std::string& socket) : api(a), ctx(a.ctx_create()) {
        if (ctx == nullptr) throw std::runtime_error("libmunge could not make a context (out of memory)");
        if (!socket.empty()) api.ctx_set(ctx, kOptSocket, socket.c_str());
    }
    ~Context() { api.ctx_destroy(ctx); }
    Context(const Context&) = delete;
    Context& operator=(const Context&) = delete;
};

}  // namespace

bool accepted(MungeError error) {
    return error == MungeError::success || error == MungeError::cred_replayed || error == MungeError::cred_expired;
}

Munge::Munge(const std::string& socket, const std::string& library) : api_(std::make_unique<Api>()), socket_(socket) {
    const std::size_t slash = socket.rfind('/');
    const std::string name = socket.substr(slash == std::string::npos ? 0 : slash + 1);
    if (!socket.empty() && judged_as_root()) {
        if (name.empty() || name == "." || name == "..") refuse_socket(socket, socket, "names no socket");
        const std::string folder = slash == std::string::npos ? "." : slash == 0 ? "/" : socket.substr(0, slash);
        socket_folder_ = open_socket_folder(socket, folder, name);
        if (socket_folder_.valid()) socket_ = fmt::format("/proc/self/fd/{}/{}", socket_folder_.get(), name);
    }
    const TrustUse use{"libmunge", "leave the library to the dynamic loader (libmunge.so.2)"};
    std::string why;
    handle_ = load_library(library, RTLD_NOW | RTLD_LOCAL, use, why);
    if (handle_ == nullptr) throw std::runtime_error(fmt::format("cannot load {}: {}", library, why));
    auto find = [&](auto& field, const char* symbol) {
        field = reinterpret_cast<std::remove_reference_t<decltype(field)>>(dlsym(handle_, symbol));
        if (field == nullptr) {
            dlclose(handle_);
            handle_ = nullptr;
            throw std::runtime_error(fmt::format("{} has no {}: not libmunge", library, symbol));
        }
    };
    find(api_->ctx_create, "munge_ctx_create");
    find(api_->ctx_destroy, "munge_ctx_destroy");
    find(api_->ctx_set, "munge_ctx_set");
    find(api_->ctx_get, "munge_ctx_get");
    find(api_->decode, "munge_decode");
    find(api_->encode, "munge_encode");
    find(api_->strerror, "munge_strerror");
}

Munge::~Munge() {
    if (handle_ != nullptr) dlclose(handle_);
}

MungeDecoded Munge::decode(std::string_view credential) const {
    MungeDecoded out;
    Context c(*api_, socket_);
    void* buf = nullptr;
    int len = 0;
    uid_t uid = 0;
    gid_t gid = 0;
    const std::string text(credential);
    const int err = api_->decode(text.c_str(), c.ctx, &buf, &len, &uid, &gid);
    out.error = static_cast<MungeError>(err);
    if (err != 0) out.message = api_->strerror(err) != nullptr ? api_->strerror(err) : "unknown error";
    if (buf != nullptr) {
        out.payload.assign(static_cast<const char*>(buf), static_cast<std::size_t>(std::max(len, 0)));
        std::free(buf);
    }
    if (accepted(out.error)) {
        MungeProof proof;
        proof.uid = uid;
        proof.gid = gid;
        in_addr addr{};
        if (api_->ctx_get(c.ctx, kOptAddr4, &addr) == 0) proof.origin = addr.s_addr;
        std::time_t encoded = 0;
        if (api_->ctx_get(c.ctx, kOptEncodeTime, &encoded) == 0) proof.encoded = encoded;
        out.proof = proof;
    }
    return out;
}

std::string Munge::reachable() const {
    Context c(*api_, socket_);
    char* cred = nullptr;
    const int err = api_->encode(&cred, c.ctx, nullptr, 0);
    std::free(cred);
    if (err == 0) return {};
    return api_->strerror(err) != nullptr ? api_->strerror(err) : "unknown error";
}

std::vector<std::uint32_t> host_addresses(const std::string& name) {
    addrinfo hints{};
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    std::vector<std::uint32_t> out;
    if (getaddrinfo(name.c_str(), nullptr, &hints, &found) != 0) return out;
    for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
        if (a->ai_family == AF_INET) out.push_back(reinterpret_cast<const sockaddr_in*>(a->ai_addr)->sin_addr.s_addr);
    }
    freeaddrinfo(found);
    return out;
}

}  // namespace cumemctl::fleet
