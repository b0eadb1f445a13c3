#include "doctor/context.hpp"

#include <fmt/format.h>

#include "cuda/driver_call.hpp"
#include "doctor/check.hpp"
#include "imex/imex_service.hpp"
#include "gpu/diagnosis/diagnosis.hpp"
#include "util/phase_timing.hpp"

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

const gpu::DeviceLimits& DeviceState::limits(const nvml::Library* nvml) {
    if (!limits_) limits_ = gpu::device_limits(api_, ordinal_, nvml, info().uuid);
    return *limits_;
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
    if (!importer_ || !importer_->socket.valid()) return;
    importer_->socket.reset();
    mark_phase(fmt::format("doctor: device {} importer let go", ordinal_));
}

void DeviceState::end_importer() {
    if (!importer_) return;
    let_importer_go();
    try {
        importer_->process.wait(kImporterEndWait);
    } catch (...) {  // a stop request: the Process ends it below
    }
    importer_.reset();
    mark_phase(fmt::format("doctor: device {} importer ended", ordinal_));
}

void DeviceState::finish() {
    let_importer_go();
    if (context_) {
        context_.reset();
        mark_phase(fmt::format("doctor: device {} context released", ordinal_));
    }
    end_importer();
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
