#include "util/thread_binding.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "util/index_list.hpp"
#include "util/text_file.hpp"

namespace cumemctl {
namespace {

constexpr std::size_t kBits = sizeof(unsigned long) * CHAR_BIT;
constexpr std::size_t kMaskWords = 4096 / kBits;  // 4096 CPUs or nodes
constexpr int kMpolDefault = 0;                   // MPOL_DEFAULT
constexpr int kMpolPreferred = 1;                 // MPOL_PREFERRED

std::vector<unsigned long> mask_of(const std::vector<int>& bits) {
    std::vector<unsigned long> mask(kMaskWords, 0);
    for (const int b : bits) {
        if (b >= 0 && static_cast<std::size_t>(b) < kMaskWords * kBits) mask[b / kBits] |= 1UL << (b % kBits);
    }
    return mask;
}

std::string errno_text(int e) {
    return std::strerror(e);
}

long sched_affinity(long call, const std::vector<unsigned long>& mask) {
    return syscall(call, 0, mask.size() * sizeof(unsigned long), mask.data());
}

}  // namespace

ThreadBinding::ThreadBinding(const std::vector<int>& cpus, std::optional<int> node) {
    std::vector<std::string> refused;
    if (!cpus.empty()) {
        old_cpus_.assign(kMaskWords, 0);
        if (sched_affinity(SYS_sched_getaffinity, old_cpus_) < 0) {
            refused.push_back(fmt::format("sched_getaffinity: {}", errno_text(errno)));
        } else if (sched_affinity(SYS_sched_setaffinity, mask_of(cpus)) < 0) {
            refused.push_back(fmt::format("sched_setaffinity to CPUs {}: {}", fmt::join(cpus, ","), errno_text(errno)));
        } else {
            cpus_bound_ = true;
        }
    }
    if (node) {
        old_nodes_.assign(kMaskWords, 0);
        const std::vector<unsigned long> wanted = mask_of({*node});
        if (syscall(SYS_get_mempolicy, &old_mode_, old_nodes_.data(), kMaskWords * kBits, nullptr, 0UL) < 0) {
            refused.push_back(fmt::format("get_mempolicy: {}", errno_text(errno)));
        } else if (syscall(SYS_set_mempolicy, kMpolPreferred, wanted.data(), kMaskWords * kBits) < 0) {
            refused.push_back(fmt::format("set_mempolicy to node {}: {}", *node, errno_text(errno)));
        } else {
            memory_bound_ = true;
        }
    }
    error_ = fmt::format("{}", fmt::join(refused, "; "));
}

ThreadBinding::~ThreadBinding() {
    if (memory_bound_) {
        const bool none = old_mode_ == kMpolDefault;
        syscall(SYS_set_mempolicy, old_mode_, none ? nullptr : old_nodes_.data(), none ? 0 : kMaskWords * kBits);
    }
    if (cpus_bound_) sched_affinity(SYS_sched_setaffinity, old_cpus_);
}

std::vector<int> node_cpus(const std::string& sysroot, int node) {
    const auto text = try_read_text_file(fmt::format("{}/sys/devices/system/node/node{}/cpulist", sysroot, node));
    if (!text) return {};
    std::string list = *text;
    while (!list.empty() && (list.back() == '\n' || list.back() == ' ')) list.pop_back();
    try {
        return parse_index_list(list, 1 << 16, "CPU", false);
    } catch (const std::exception&) {
        return {};
    }
}

}  // namespace cumemctl
