#include "gpu/pool/pool_trim.hpp"

#include <fmt/format.h>

#include "cuda/driver_call.hpp"
#include "gpu/device/primary_context.hpp"
#include "gpu/vmm/resource_snapshot.hpp"
#include "base/error.hpp"
#include "base/setting.hpp"
#include "util/size.hpp"
#include "util/stopwatch.hpp"
#include "base/scope_exit.hpp"

namespace cumemctl::gpu {
namespace {}  // namespace

TrimVerdict judge_trim(const TrimFigures& f) {
    if (f.reserved_after > f.keep + f.granule) {
        return {false, fmt::format("the pool still holds {} after trimming to keep {}", format_size(f.reserved_after),
                                   format_size(f.keep))};
    }
    const std::uint64_t back = f.reserved_before > f.reserved_after ? f.reserved_before - f.reserved_after : 0;
    return {true,
            fmt::format("{} came back to the device; the pool holds {} after trimming to keep {}, within one "
                        "granule ({})",
                        format_size(back), format_size(f.reserved_after), format_size(f.keep), format_size(f.granule))};
}

void require_keep_within(std::uint64_t keep, std::uint64_t reserved) {
    if (keep <= reserved) return;
    const std::string keep_name = setting_name(Setting::keep);
    throw Error(ExitCode::usage,
                fmt::format("{} {} ({} bytes) is more than the pool has reserved: {} ({} bytes)", keep_name,
                            format_size(keep), keep, format_size(reserved), reserved),
                fmt::format("give {} at most {}, or a larger {} workload", keep_name, format_size(reserved),
                            setting_name(Setting::exercise)));
}

TrimResult run_trim(const DriverApi& api, CUmemoryPool pool, const WorkloadPattern& pattern, std::uint64_t keep,
                    std::uint64_t granule) {
    CU_REQUIRE(api, cuMemPoolTrimTo);
    CU_REQUIRE(api, cuMemPoolSetAttribute);
    TrimResult r;
    // The pool keeps everything while the workload runs; afterwards its release threshold is restored and
    // it is trimmed back to what it had reserved at the start, on every way out.
    const PoolAttributes start = read_pool_attributes(api, pool);
    set_release_threshold(api, pool, kKeepEverything);
    const ScopeExit restore([&] {
        cuuint64_t value = start.release_threshold;
        api.cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &value);
        api.cuMemPoolTrimTo(pool, start.reserved_current);
    });
    r.workload = run_workload(api, pool, pattern, true);
    TrimFigures& f = r.figures;
    f.keep = keep;
    f.granule = granule;
    f.free_at_start = r.workload.before.device_free.value_or(0);
    f.free_before_trim = r.workload.after_sync.device_free.value_or(0);
    f.reserved_before = r.workload.after_sync.pool.reserved_current;
    require_keep_within(keep, f.reserved_before);
    Stopwatch watch;
    CU_CALL(api, cuMemPoolTrimTo, pool, keep);
    r.trim_seconds = watch.seconds();
    f.reserved_after = read_pool_attributes(api, pool).reserved_current;
    f.free_after_trim = current_device_memory(api).free;
    r.verdict = judge_trim(f);
    return r;
}

nlohmann::json to_json(const TrimFigures& f) {
    return {{"keep_bytes", f.keep},
            {"granule_bytes", f.granule},
            {"reserved_before_bytes", f.reserved_before},
            {"reserved_after_bytes", f.reserved_after},
            {"device_free_at_start_bytes", f.free_at_start},
            {"device_free_before_trim_bytes", f.free_before_trim},
            {"device_free_after_trim_bytes", f.free_after_trim},
            {"device_free_scope", kDeviceFreeScope}};
}

}  // namespace cumemctl::gpu
