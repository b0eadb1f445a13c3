#include "gpu/le/logical_endpoint.hpp"

#include <algorithm>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "base/setting.hpp"
#include "util/size.hpp"

namespace cumemctl::gpu {

LeIdRange::LeIdRange(StepLog& log, std::uint32_t count) : log_(log), count_(count), release_(reserve()) {}

std::function<void()> LeIdRange::reserve() {
    steps::Step& s = log_.call(fmt::format("reserve {} endpoint id{}", count_, count_ == 1 ? "" : "s"),
                               "cuLogicalEndpointIdReserve", log_.api().cuLogicalEndpointIdReserve, &base_, count_);
    s.detail = describe();
    return [this] {
        log_.undo(fmt::format("release endpoint {}", describe()), "cuLogicalEndpointIdRelease",
                  log_.api().cuLogicalEndpointIdRelease, base_, count_);
    };
}

std::string LeIdRange::describe() const {
    return count_ == 1 ? fmt::format("id {}", base_) : fmt::format("ids {} to {}", base_, base_ + count_ - 1);
}

LeQueryWait poll_constructed(const DriverApi& api, CUlogicalEndpointId id, std::uint32_t count,
                             std::chrono::duration<double> timeout) {
    CU_REQUIRE(api, cuLogicalEndpointQuery);
    LeQueryWait w;
    Stopwatch sw;
    auto pause = std::chrono::microseconds(50);
    for (;;) {
        int status = 0;
        const CUresult r = api.cuLogicalEndpointQuery(id, count, &status);
        ++w.polls;
        w.waited_seconds = sw.seconds();
        check(api, r, "cuLogicalEndpointQuery");
        if (status != 0) {
            w.constructed = true;
            return w;
        }
        if (w.waited_seconds >= timeout.count()) return w;
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, std::chrono::microseconds(10000));
    }
}

LogicalEndpoint::LogicalEndpoint(StepLog& log, CUlogicalEndpointId id, const CUlogicalEndpointProp& prop)
    : log_(log), id_(id), prop_(prop), destroy_(create()) {}

LogicalEndpoint::LogicalEndpoint(StepLog& log, CUlogicalEndpointId id, const void* fabric_handle)
    : log_(log), id_(id), imported_(true), destroy_(import_fabric(fabric_handle)) {}

std::function<void()> LogicalEndpoint::destroy_step() {
    return [this] {
        log_.undo(fmt::format("destroy endpoint {}", id_), "cuLogicalEndpointDestroy",
                  log_.api().cuLogicalEndpointDestroy, id_);
    };
}

std::function<void()> LogicalEndpoint::create() {
    const bool mc = multicast();
    log_.call(fmt::format("create {} endpoint", mc ? "multicast" : "unicast"), "cuLogicalEndpointCreate",
              log_.api().cuLogicalEndpointCreate, id_, &prop_)
        .detail =
        mc ? fmt::format("id {}, team of {}, {} a device", id_, prop_.multicast.numDevices, format_size(prop_.size))
           : fmt::format("id {}, owner device {}, {}", id_, prop_.unicast.device, format_size(prop_.size));
    return destroy_step();
}

std::function<void()> LogicalEndpoint::import_fabric(const void* fabric_handle) {
    log_.call("import endpoint", "cuLogicalEndpointImport", log_.api().cuLogicalEndpointImport, id_, fabric_handle,
              static_cast<CUlogicalEndpointIpcHandleType>(le::kIpcFabric))
        .detail = fmt::format("id {} from a fabric handle", id_);
    return destroy_step();
}

void LogicalEndpoint::add_device(int device) {
    if (!multicast()) {
        throw Error(ExitCode::usage,
                    fmt::format("endpoint {} is unicast: devices are added only to multicast endpoints", id_),
                    "for a team, create a multicast endpoint and add its devices before construction completes");
    }
    log_.call(fmt::format("add device {}", device), "cuLogicalEndpointAddDevice", log_.api().cuLogicalEndpointAddDevice,
              id_, static_cast<CUdevice>(device));
    added_.push_back(device);
}

LeQueryWait LogicalEndpoint::wait_constructed(std::chrono::duration<double> timeout, const std::string& waited_for) {
    LeQueryWait w;
    Stopwatch sw;
    try {
        w = poll_constructed(log_.api(), id_, 1, timeout);
    } catch (const Error& e) {
        Problem p = e.problem();
        steps::Step& s = log_.note(fmt::format("wait for endpoint {}", id_), sw.seconds(), p.message);
        s.call = "cuLogicalEndpointQuery";
        s.ok = false;
        if (p.driver) {
            s.result = p.driver->code;
            s.result_name = p.driver->name;
            log_.diagnose(p);
        }
        throw Error(std::move(p));
    }
    steps::Step& s = log_.note(fmt::format("wait for endpoint {}", id_), w.waited_seconds,
                               fmt::format("{} poll{} of cuLogicalEndpointQuery", w.polls, w.polls == 1 ? "" : "s"));
    s.call = "cuLogicalEndpointQuery";
    s.result_name = "CUDA_SUCCESS";
    if (!w.constructed) {
        s.result_name = "deadline";
        s.ok = false;
        throw Error(Problem{
            .exit_code = ExitCode::failed,
            .message = fmt::format("endpoint {} was not constructed within {:g} s: {} polls of cuLogicalEndpointQuery "
                                   "over {:.3f} s saw it incomplete",
                                   id_, timeout.count(), w.polls, w.waited_seconds),
            .cause = fmt::format("waited for {}", waited_for),
            .remedy = fmt::format("wait longer (a longer {}); if it never completes, check that the fabric software "
                                  "(nvidia-fabricmanager, nvidia-imex) runs and that every device of a team is in one "
                                  "NVLink clique",
                                  setting_name(Setting::construction_timeout))});
    }
    constructed_ = true;
    return w;
}

std::vector<unsigned char> LogicalEndpoint::export_fabric() {
    std::vector<unsigned char> handle(le::kFabricHandleBytes, 0);
    log_.call("export endpoint", "cuLogicalEndpointExport", log_.api().cuLogicalEndpointExport,
              static_cast<void*>(handle.data()), id_, static_cast<CUlogicalEndpointIpcHandleType>(le::kIpcFabric))
        .detail = fmt::format("{}-byte fabric handle", handle.size());
    return handle;
}

void LogicalEndpoint::check_bind_device(int device) const {
    if (!constructed_) {
        throw Error(ExitCode::usage, fmt::format("endpoint {} is not known to be constructed yet", id_),
                    "wait for cuLogicalEndpointQuery to report it constructed before binding");
    }
    if (imported_ && !multicast()) {
        throw Error(ExitCode::usage,
                    fmt::format("endpoint {} is an imported unicast endpoint: it binds no memory", id_),
                    "bind on the exporting side");
    }
    if (!multicast() && !imported_ && device != prop_.unicast.device) {
        throw Error(ExitCode::usage,
                    fmt::format("device {} is not the owner of unicast endpoint {}: only device {} binds memory to it",
                                device, id_, prop_.unicast.device),
                    fmt::format("bind on device {}", prop_.unicast.device));
    }
    if (multicast() && !imported_ && std::find(added_.begin(), added_.end(), device) == added_.end()) {
        throw Error(ExitCode::usage,
                    fmt::format("device {} was not added to multicast endpoint {} (added: {})", device, id_,
                                added_.empty() ? std::string("none") : fmt::format("{}", fmt::join(added_, ","))),
                    "add the device with cuLogicalEndpointAddDevice before construction completes");
    }
}

LeBinding::LeBinding(StepLog& log, const LogicalEndpoint& endpoint, int device, const LeSource& source,
                     const LeBindPlan& plan, const LeLimits& limits)
    : log_(log),
      id_(endpoint.id()),
      device_(device),
      plan_(plan),
      by_address_(source.ptr != 0),
      unbind_(bind(endpoint, source, limits)) {}

std::function<void()> LeBinding::bind(const LogicalEndpoint& endpoint, const LeSource& source, const LeLimits& limits) {
    endpoint.check_bind_device(device_);
    if (auto v = check_bind_plan(plan_, limits)) refuse(*v);
    const auto& api = log_.api();
    const std::string what = fmt::format("bind on device {}", device_);
    // The driver takes the source address as a pointer.
    void* const address = reinterpret_cast<void*>(source.ptr + plan_.mem_offset);  // NOLINT(performance-no-int-to-ptr)
    steps::Step& s = by_address_
                         ? log_.call(what, "cuLogicalEndpointBindAddr", api.cuLogicalEndpointBindAddr, id_,
                                     static_cast<CUdevice>(device_), plan_.offset, address, plan_.bind_size, 0ULL)
                         : log_.call(what, "cuLogicalEndpointBindMem", api.cuLogicalEndpointBindMem, id_,
                                     static_cast<CUdevice>(device_), plan_.offset, source.handle, plan_.mem_offset,
                                     plan_.bind_size, 0ULL);
    s.detail = fmt::format("{} at endpoint offset {} from memory offset {}", format_size(plan_.bind_size),
                           format_size(plan_.offset), format_size(plan_.mem_offset));
    return [this] {
        log_.undo(fmt::format("unbind on device {}", device_), "cuLogicalEndpointUnbind",
                  log_.api().cuLogicalEndpointUnbind, id_, static_cast<CUdevice>(device_), plan_.offset,
                  plan_.bind_size);
    };
}

}  // namespace cumemctl::gpu
