// The rules the driver applies to logical endpoint sizes and bindings, checked before any call so that
// a user hears which number is wrong and the nearest numbers that would be right.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/setting.hpp"

namespace cumemctl::gpu {

// What cuLogicalEndpointGetLimits answered for a set of properties. The checks below need
// bind_alignment > 0; callers refuse a driver answer of 0 first.
struct LeLimits {
    std::uint64_t bind_alignment = 0;  // offsets and sizes are multiples of this
    std::uint64_t max_size = 0;        // the largest endpoint size for these properties
};

// One binding as asked, with the sizes it must fit in.
struct LeBindPlan {
    std::uint64_t endpoint_size = 0;    // CUlogicalEndpointProp.size
    std::uint64_t allocation_size = 0;  // the cuMemCreate allocation that is bound
    std::uint64_t offset = 0;           // into the endpoint
    std::uint64_t mem_offset = 0;       // into the allocation
    std::uint64_t bind_size = 0;
};

// A value that would keep a broken rule: the setting and its value (named through setting_name: the
// running command's option, or the core's words).
struct LeSuggestion {
    Setting property = Setting::endpoint_size;
    std::uint64_t value = 0;
};

// A broken rule: the sentence that says which number breaks which rule, and the nearest valid values.
struct LeViolation {
    std::string message;
    std::vector<LeSuggestion> nearest;
};

// Checks the endpoint size: more than 0, a multiple of the bind alignment, at most maxSize.
std::optional<LeViolation> check_endpoint_size(std::uint64_t size, const LeLimits& limits);

// Checks a binding: offset, mem offset and size multiples of the bind alignment, offsets inside their
// ranges, size + mem offset within the allocation, size + offset within the endpoint.
std::optional<LeViolation> check_bind_plan(const LeBindPlan& plan, const LeLimits& limits);

// The largest binding that fits both the endpoint from `offset` and the allocation from `mem_offset`
// (0 when either offset is past its end).
std::uint64_t largest_bind(std::uint64_t endpoint_size, std::uint64_t allocation_size, std::uint64_t offset,
                           std::uint64_t mem_offset);

// A size as an option value that parse_size reads back exactly: "2MiB", "1GiB", "12345".
std::string size_argument(std::uint64_t bytes);

// The remedy of a violation, each setting named by setting_name: "nearest valid: endpoint offset 2MiB
// or endpoint offset 4MiB" ("--offset 2MiB" for le-bind), or a general one where no value would do.
std::string nearest_remedy(const LeViolation& violation);

// Throws Error (usage, exit 2) with the violation's message and its nearest values as the remedy.
[[noreturn]] void refuse(const LeViolation& violation);

}  // namespace cumemctl::gpu
