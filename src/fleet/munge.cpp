#include "fleet/munge.hpp"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>

namespace cumemctl::fleet {
namespace {

// munge_opt_t's values that fleet sets or reads (munge.h).
constexpr int kOptAddr4 = 5;
constexpr int kOptEncodeTime = 6;
constexpr int kOptSocket = 8;

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
    handle_ = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) {
        const char* why = dlerror();
        throw std::runtime_error(fmt::format("cannot load {}: {}", library, why != nullptr ? why : "unknown"));
    }
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
