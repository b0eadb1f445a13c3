// Stream-ordered workloads as people write them: "64x16MiB" (64 allocations of 16 MiB), or a list
// such as "8x1GiB,16x2MiB"; a bare size is one allocation.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.hpp"

namespace cumemctl::gpu {

// One group of a workload: `count` allocations of `size` bytes.
struct WorkloadItem {
    std::uint64_t count = 0;
    std::uint64_t size = 0;
};

// A parsed workload, in the order the allocations are made.
struct WorkloadPattern {
    std::string text;  // as typed
    std::vector<WorkloadItem> items;

    // How many allocations the workload makes.
    std::uint64_t allocations() const;
    // The bytes the workload asks for, before rounding.
    std::uint64_t bytes() const;
};

// The most allocations one workload may make (each is a driver call and a pointer kept).
inline constexpr std::uint64_t kMaxWorkloadAllocations = 1'000'000;

// Parses "COUNTxSIZE[,COUNTxSIZE...]" (SIZE as parse_size reads it; a bare SIZE is 1xSIZE). Throws a
// usage error naming the item that does not parse, a zero count or size, too many allocations, or a
// total above 2^64-1 bytes.
WorkloadPattern parse_workload_pattern(std::string_view text);

// The memory a pool must reserve for the workload when each allocation takes whole granules: the
// sum of count x size rounded up to `granule` (granule > 0). Throws a usage error on overflow.
std::uint64_t pool_footprint(const WorkloadPattern& pattern, std::uint64_t granule);

// The usage error of a request that does not fit, found before anything is allocated; `where` says
// which limit ("device 0's free memory", "the pool's maximum size"), so that a caller can name its own
// option for a limit the user set.
class NoRoomError : public Error {
public:
    NoRoomError(std::string what, std::uint64_t footprint, std::uint64_t available, std::string where);
    std::string what;         // the request: "workload '64x16MiB'", "a block of 2 MiB"
    std::uint64_t footprint;  // bytes it needs
    std::uint64_t available;  // bytes the limit allows
    std::string where;        // the limit
};

// The words for `what` needing `footprint` bytes where `where` allows `available`: the message of
// NoRoomError, which a caller that rewords `where` builds again with this.
std::string no_room_message(std::string_view what, std::uint64_t footprint, std::uint64_t available,
                            std::string_view where);

// Throws NoRoomError, before anything is allocated, when `footprint` bytes do not fit in
// `available` bytes of `where` (for example "device 0's free memory"). `what` names the request in
// the message: "workload '64x16MiB'", "a block of 2 MiB".
void require_fits(std::string_view what, std::uint64_t footprint, std::uint64_t available, std::string_view where);

// A default workload fitted beside other processes: fewer allocations of the same sizes (the last item
// first), taking at most `available` bytes when each takes whole granules; nullopt where not even one
// allocation fits. `pattern` itself where it fits already. Its text says what it became ("28x16MiB").
std::optional<WorkloadPattern> shrink_to_fit(const WorkloadPattern& pattern, std::uint64_t granule,
                                             std::uint64_t available);

}  // namespace cumemctl::gpu
