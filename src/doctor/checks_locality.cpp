// doctor's locality check (CUDA 13.4): on a device with several locality domains, a small localized
// allocation and a localized pool in each domain, with the placement the driver reports confirmed
// against what was asked (a warning where it cannot be). Skipped below 13.4 and on one domain.
#include <fmt/format.h>

#include "base/setting.hpp"
#include "doctor/registry.hpp"
#include "gpu/device/locality.hpp"
#include "gpu/pool/pool_access.hpp"
#include "gpu/pool/pool_workload.hpp"
#include "gpu/vmm/vmm_create.hpp"

namespace cumemctl::doctor {
using namespace gpu;
namespace {

// One domain: a one-granule cuMemCreate mapped, and a pool with one block; each placement read back.
// Throws Error for a call that failed.
DomainChecked check_domain(const DriverApi& api, int device, int domain, int domains, bool& confirmed,
                           std::vector<std::string>& unconfirmed) {
    CreateRequest request;
    request.device = device;
    request.memory.location =
        LocationSpec{static_cast<CUmemLocationType>(locality::kLocationType), std::nullopt, domain};
    request.size = 1;
    request.round_up = true;
    request.map = true;
    CreateResult created;
    run_create(api, request, created);
    OwnedPool pool(api, device, PoolRequest{request.memory.location, CU_MEM_HANDLE_TYPE_NONE, 0});
    const Placement pool_at = pool_placement(api, pool.handle(), domain, domains);
    std::optional<Placement> block_at;
    {
        const Stream stream(api);
        PoolAllocation block(api, pool.handle(), pool_granule(api, pool.info().location), stream);
        block_at = pointer_placement(api, block.get(), domain, domains);
        block.free();
    }
    pool.destroy();
    for (const Placement* p : std::initializer_list<const Placement*>{&*created.placement, &pool_at, &*block_at}) {
        if (!p->confirmed()) {
            confirmed = false;
            unconfirmed.push_back(fmt::format("domain {}: {}", domain, placement_text(*p)));
        }
    }
    return {domain, created.size, *created.placement, pool_at, *block_at};
}

}  // namespace

CheckOutcome check_locality(DoctorContext&, DeviceState* device) {
    const DriverApi& api = device->api();
    const int dev = device->ordinal();
    const LocalityInfo info = query_locality(api, dev, LocalityProbe::none);
    LocalityEvidence details{info, {}, {}};
    if (!info.driver_has())
        return CheckOutcome::skip("unknown: " + locality_unknown_reason(info.driver_version), details);
    if (!info.domains) {
        return CheckOutcome::skip("unknown: the driver does not answer the locality domain count", details);
    }
    if (*info.domains <= 1) return CheckOutcome::skip("one locality domain: the whole device", details);
    if (dev > locality::kMaxId) {
        return CheckOutcome::skip(fmt::format("device {} cannot be named in a localized location (above 255)", dev),
                                  details);
    }
    device->context();
    bool confirmed = true;
    std::vector<std::string> unconfirmed;
    std::vector<DomainChecked> per_domain;
    try {
        for (int d = 0; d < *info.domains; ++d)
            per_domain.push_back(check_domain(api, dev, d, *info.domains, confirmed, unconfirmed));
    } catch (const Error& e) {
        details.domains_checked = std::move(per_domain);
        return CheckOutcome::fail(
            fmt::format("localized memory failed: {}", e.problem().message),
            e.problem().remedy.empty()
                ? fmt::format("run 'cumemctl {}' to see it again",
                              command_line(Command::create, {{Setting::location, "domain:I"}, {Setting::map}}))
                : e.problem().remedy,
            std::move(details));
    }
    details.domains_checked = std::move(per_domain);
    // The attributes must also answer -1 for memory that is not localized: the device's default pool.
    const CUmemLocation whole{CU_MEM_LOCATION_TYPE_DEVICE, dev};
    const Placement plain =
        pool_placement_unlocalized(api, default_pool(api, dev, whole, CU_MEM_ALLOCATION_TYPE_PINNED).handle);
    details.default_pool = plain;
    if (!plain.confirmed()) {
        confirmed = false;
        unconfirmed.push_back(fmt::format("the default pool: {}", placement_text(plain)));
    }
    const std::string made =
        fmt::format("{} domains of {} SMs each: a localized allocation and a localized pool in each", *info.domains,
                    info.sms_per_domain ? std::to_string(*info.sms_per_domain) : "?");
    if (!confirmed) {
        return CheckOutcome::warn(fmt::format("{}, but placement unconfirmed ({})", made, fmt::join(unconfirmed, "; ")),
                                  "the pointer and pool attributes are single-source values (docs/locality.md): check "
                                  "them against a CUDA 13.4 cuda.h, and report what the driver answered",
                                  std::move(details));
    }
    return CheckOutcome::pass(made + ", placement confirmed", std::move(details));
}

}  // namespace cumemctl::doctor
