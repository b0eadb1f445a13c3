#include "gpu/memtest/memtest_memory.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "base/interrupt.hpp"
#include "gpu/device/memory_props.hpp"
#include "cuda/driver_call.hpp"
#include "util/size.hpp"
#include "util/stopwatch.hpp"

namespace cumemctl::gpu::memtest {
namespace {

// The problem of a chunk the driver refused: a result of the run, with the bytes made until then.
Problem shortfall_problem(const Error& e, std::uint64_t made, std::uint64_t target) {
    Problem p = e.problem();
    p.message = fmt::format("the driver made {} of the {} planned ({}): {}", format_size(made), format_size(target),
                            p.driver ? p.driver->call : "allocation", e.problem().message);
    p.cause = "another process (or this one's driver state) took device memory after free memory was measured";
    p.remedy = "the memory made was tested; run again on an idle device, or leave a larger margin, to test the rest";
    return p;
}

}  // namespace

TestMemory::TestMemory(const DriverApi& api, const MemoryPlan& plan, StepLog& log) {
    const std::uint64_t granule = std::max<std::uint64_t>(plan.granularity, 1);
    const std::uint64_t target = plan.target / granule * granule;
    if (target == 0) {
        throw Error(
            ExitCode::failed,
            fmt::format("no memory to test on GPU {}: the free memory less the margin is under one granule ({})",
                        plan.device, format_size(granule)),
            "leave a smaller margin, or free memory on the device first");
    }
    log.time("reserve", "cuMemAddressReserve", [&] { range_.emplace(api, target, granule); });
    const CUmemAllocationProp prop = allocation_prop(api, MemoryRequest{}, plan.device);
    Stopwatch watch;
    std::uint64_t offset = 0;
    std::uint64_t chunk = plan.chunk;
    unsigned smaller = 0;  // chunks halved after the driver refused a larger one
    while (offset < target) {
        check_interrupted();
        const std::uint64_t size = std::min(chunk, target - offset);
        try {
            CUmemGenericAllocationHandle h = 0;
            CU_CALL(api, cuMemCreate, &h, size, &prop, 0);
            handles_.emplace_back(api, h);
            mappings_.emplace_back(api, range_->base() + offset, size, h);
        } catch (const Error& e) {
            // Out of memory for this size: smaller chunks, down to one granule, may still fit.
            const auto& d = e.problem().driver;
            if (d && failed_at(*d, "cuMemCreate") && result_of(*d) == CUDA_ERROR_OUT_OF_MEMORY && size > granule) {
                chunk = std::max(granule, size / 2 / granule * granule);
                ++smaller;
                continue;
            }
            shortfall_ = shortfall_problem(e, offset, target);
            break;
        }
        chunks_.push_back({offset, size});
        offset += size;
    }
    bytes_ = offset;
    log.note("create and map chunks", watch.seconds(),
             fmt::format("{} chunk{} ({}) of {} planned{}{}", chunks_.size(), chunks_.size() == 1 ? "" : "s",
                         format_size(bytes_), format_size(target),
                         smaller == 0 ? ""
                                      : fmt::format("; chunks halved {} time{} when the driver had no room for one",
                                                    smaller, smaller == 1 ? "" : "s"),
                         shortfall_ ? "; then the driver refused one" : ""));
    if (bytes_ == 0) {
        Problem p = *shortfall_;
        p.message = fmt::format("no memory could be made on GPU {}: {}", plan.device, shortfall_->message);
        throw Error(std::move(p));
    }
    log.time("access", "cuMemSetAccess", [&] { grant_device_access(api, range_->base(), bytes_, {plan.device}); });
}

TestMemory::~TestMemory() = default;

std::size_t TestMemory::chunk_at(std::uint64_t offset) const {
    const auto it = std::upper_bound(chunks_.begin(), chunks_.end(), offset,
                                     [](std::uint64_t o, const Chunk& c) { return o < c.offset; });
    return it == chunks_.begin() ? 0 : static_cast<std::size_t>(it - chunks_.begin() - 1);
}

void TestMemory::release(StepLog& log) {
    if (!range_) return;
    Stopwatch watch;
    std::vector<Problem> failures;
    for (auto& m : mappings_) {
        try {
            m.unmap();
        } catch (const Error& e) {
            failures.push_back(e.problem());
        }
    }
    for (auto& h : handles_) {
        try {
            h.release();
        } catch (const Error& e) {
            failures.push_back(e.problem());
        }
    }
    try {
        range_->free();
    } catch (const Error& e) {
        failures.push_back(e.problem());
    }
    log.note("unmap, release and free", watch.seconds(),
             fmt::format("{} chunk{} and the range", chunks_.size(), chunks_.size() == 1 ? "" : "s"))
        .undo = true;
    range_.reset();
    mappings_.clear();
    handles_.clear();
    for (auto& f : failures) log.keep_problem(std::move(f));
}

}  // namespace cumemctl::gpu::memtest
