#include "doctor/context.hpp"

#include <fmt/format.h>

#include "cuda/driver_call.hpp"
#include "doctor/check.hpp"
#include "gpu/diagnosis/diagnosis.hpp"

namespace cumemctl::doctor {
using namespace gpu;

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
        require_entry(reinterpret_cast<const void*>(api_.cuDevicePrimaryCtxRetain), "cuDevicePrimaryCtxRetain", 7000);
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

void DeviceState::keep_child(std::string_view check, ipc::Child child) {
    children_.emplace_back(std::string(check), std::move(child));
}

std::optional<ipc::Child> DeviceState::take_child(std::string_view check) {
    for (auto it = children_.begin(); it != children_.end(); ++it) {
        if (it->first != check) continue;
        std::optional<ipc::Child> child(std::move(it->second));
        children_.erase(it);
        return child;
    }
    return std::nullopt;
}

bool DeviceState::has_child(std::string_view check) const {
    for (const auto& [id, child] : children_) {
        if (id == check) return true;
    }
    return false;
}

void DeviceState::finish() {
    // Every socket first, so that the children end together, then each is reaped.
    for (auto& [check, child] : children_) child.socket.reset();
    children_.clear();
    context_.reset();
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

}  // namespace cumemctl::doctor
