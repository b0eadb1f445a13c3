#include "matrix/fd_exchange.hpp"

#include <chrono>

#include <fmt/format.h>

#include "ipc/envelope.hpp"

namespace cumemctl::matrix {
namespace {

using Clock = std::chrono::steady_clock;

// The coordinator's request that hands a rank another rank's descriptor.
constexpr const char* kDescriptorService = "descriptor";

ipc::Timeout left_until(Clock::time_point deadline) {
    const auto left = std::chrono::duration_cast<ipc::Timeout>(deadline - Clock::now());
    return left.count() > 0 ? left : ipc::Timeout{1};
}

}  // namespace

void DescriptorExchange::offer(int rank, int fd, const std::optional<Problem>& problem) const {
    offered_ = true;
    ipc::Envelope e;
    e.problem = problem;
    e.result = {{"rank", rank}, {"fd", fd >= 0}};
    ipc::send_envelope(socket_, e, fd);
}

std::map<int, UniqueFd> DescriptorExchange::collect(int count, ipc::Timeout timeout) const {
    std::map<int, UniqueFd> out;
    const auto deadline = Clock::now() + timeout;
    for (int i = 0; i + 1 < count; ++i) {
        ipc::Request e = ipc::receive_request(socket_, left_until(deadline));
        const int rank = e.service == kDescriptorService ? e.fields.value("rank", -1) : -1;
        if (rank < 0 || rank >= count) throw Error(ExitCode::failed, "the coordinator sent a descriptor of no rank");
        if (e.fd.valid()) out[rank] = std::move(e.fd);
    }
    return out;
}

void broker_descriptors(const std::vector<int>& sockets, ipc::Timeout timeout) {
    const auto deadline = Clock::now() + timeout;
    std::vector<UniqueFd> offered(sockets.size());
    for (std::size_t i = 0; i < sockets.size(); ++i) {
        try {
            ipc::Envelope e = ipc::receive_envelope(sockets[i], left_until(deadline));
            offered[i] = std::move(e.fd);
        } catch (const Error&) {
            // A rank that offers nothing (it failed, or is late) is passed on as having no descriptor.
        }
    }
    for (std::size_t i = 0; i < sockets.size(); ++i) {
        for (std::size_t j = 0; j < sockets.size(); ++j) {
            if (i == j) continue;
            const ipc::Request e{kDescriptorService, {{"rank", static_cast<int>(j)}, {"fd", offered[j].valid()}}, {}};
            try {
                ipc::send_request(sockets[i], e, offered[j].get());
            } catch (const Error&) {
                break;  // rank i has gone; its own answer says why
            }
        }
    }
}

}  // namespace cumemctl::matrix
