#include "doctor/context.hpp"

#include <fmt/format.h>

#include "cuda/driver_call.hpp"
#include "doctor/check.hpp"
#include "imex/imex_service.hpp"
#include "gpu/diagnosis/diagnosis.hpp"
#include "util/phase_timing.hpp"
#include "util/unix_socket.hpp"

namespace cumemctl::doctor {
using namespace gpu;
namespace {

// How long doctor waits for an importer to end once its socket is closed (its context going is the
// most of it) before the Process stops it.
constexpr ipc::Timeout kImporterEndWait{5000};

}  // namespace

std::optional<int> capability_of(const DeviceInfo& info, std::string_view key) {
    for (const auto& c : info.capabilities) {
        if (c.key == key) return c.value;
    }
    return std::nullopt;
}

DeviceState::~DeviceState() {
    finish();
}

const DeviceInfo& DeviceState::info() {
    if (info_) return *info_;
    if (!info_error_.empty())
        throw CheckSkipped(fmt::format("device {} could not be queried: {}", ordinal_, info_error_));
    try {
        info_ = query_device(api_, ordinal_);
    } catch (const Error& e) {
        info_error_ = e.what();
        throw;
    }
    return *info_;
}

CUcontext DeviceState::context() {
    if (context_) return context_->get();
    if (!context_error_.empty()) {
        throw CheckSkipped(
            fmt::format("no context on device {} (see the context check): {}", ordinal_, context_error_));
    }
    try {
        CU_REQUIRE(api_, cuDevicePrimaryCtxRetain);
        context_.emplace(api_, ordinal_);
    } catch (Error& e) {
        // The reason and a remedy a person can act on: a device held in exclusive-process mode by another
        // process, or one out of memory, is a result of the context check, not a crash nor a leak.
        DiagnosisContext diagnosis;
        diagnosis.device = ordinal_;
        diagnose_problem(api_, e.problem(), diagnosis);
        context_error_ = e.what();
        if (!e.problem().cause.empty()) context_error_ += ": " + e.problem().cause;
        throw;
    }
    return context_->get();
}

namespace {

DeviceState::Paths ask_paths(const DriverApi& api, int ordinal, const nvml::Library* nvml, const std::string& uuid,
                             const std::string& sysroot) {
    return {gpu::device_limits(api, ordinal, nvml, uuid), gpu::host_placement(api, ordinal, nvml, uuid, sysroot)};
}

}  // namespace

void DeviceState::ask_paths_ahead(const nvml::Library* nvml, const std::string& sysroot) {
    const DeviceInfo* info = peek_info();
    if (info == nullptr || paths_ || paths_ahead_.valid()) return;
    try {
        paths_ahead_ = std::async(std::launch::async, ask_paths, std::cref(api_), ordinal_, nvml, info->uuid, sysroot);
    } catch (const std::system_error&) {  // no thread to be had: asked when needed
    }
}

const DeviceState::Paths& DeviceState::paths(const nvml::Library* nvml, const std::string& sysroot) {
    if (!paths_)
        paths_ = paths_ahead_.valid() ? paths_ahead_.get() : ask_paths(api_, ordinal_, nvml, info().uuid, sysroot);
    return *paths_;
}

const DeviceInfo* DeviceState::peek_info() noexcept {
    if (info_) return &*info_;
    if (!info_error_.empty()) return nullptr;
    try {
        info_ = query_device(api_, ordinal_);
        return &*info_;
    } catch (...) {  // info() queries again and reports it; a stop request is seen at the next check
        return nullptr;
    }
}

void DeviceState::let_importer_go() {
    if (!importer_ || importer_let_go_) return;
    end_sending(importer_->socket.get());
    importer_let_go_ = true;
    mark_phase(fmt::format("doctor: device {} importer let go", ordinal_));
}

void DeviceState::end_importer() {
    if (!importer_ || !importer_->socket.valid()) return;
    let_importer_go();
    try {
        // Its end of the socket: it has released its context (or has gone, or never will in time).
        while (receive_message_or_end(importer_->socket.get(), kImporterEndWait)) {
        }
    } catch (...) {  // a stop request, a timeout or a broken socket: the Process ends it in finish()
    }
    importer_->socket.reset();
    mark_phase(fmt::format("doctor: device {} importer released its context", ordinal_));
}

void DeviceState::finish() {
    let_importer_go();
    if (context_) {
        context_.reset();
        mark_phase(fmt::format("doctor: device {} context released", ordinal_));
    }
    if (!importer_) return;
    end_importer();
    try {
        importer_->process.wait(kImporterEndWait);
    } catch (...) {  // a stop request: the Process ends it below
    }
    importer_.reset();
    importer_let_go_ = false;
    mark_phase(fmt::format("doctor: device {} importer ended", ordinal_));
}

void DoctorContext::ensure_initialised() {
    if (init_tried) return;
    init_tried = true;
    if (driver == nullptr || !driver->loaded()) return;
    try {
        device_count = driver->init();
    } catch (const Error& e) {
        init_error = e.problem();
    }
}

std::optional<nvml::Device> DoctorContext::nvml_device(const std::string& uuid, std::string& why) const {
    return nvml::find_device(nvml, uuid, why);
}

std::string DoctorContext::imex_config_path() const {
    return options.imex_config.empty() ? std::string(imex::kImexConfigPath) : options.imex_config;
}

const std::vector<std::pair<std::string, nvml::FabricInfo>>& DoctorContext::node_fabric() const {
    std::call_once(fabric_->once, [this] {
        if (nvml == nullptr || !nvml->loaded()) return;
        for (const std::string& uuid : nvml->uuids()) {
            if (const auto handle = nvml->device_by_uuid(uuid)) {
                fabric_->gpus.emplace_back(uuid, nvml::query_fabric_info(*nvml, *handle));
            }
        }
    });
    return fabric_->gpus;
}

}  // namespace cumemctl::doctor
