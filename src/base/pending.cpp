#include "base/pending.hpp"

namespace cumemctl {
namespace {

thread_local PendingSlot* this_thread_slot = nullptr;

}  // namespace

void watch_this_thread(PendingSlot* slot) noexcept {
    this_thread_slot = slot;
}

std::int64_t pending_clock_ns() noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

Pending::Pending(const char* what) noexcept : slot_(this_thread_slot) {
    if (slot_ == nullptr) return;
    outer_ = slot_->what.load();
    outer_since_ = slot_->since_ns.load();
    slot_->since_ns.store(pending_clock_ns());
    slot_->what.store(what);
}

Pending::~Pending() {
    if (slot_ == nullptr) return;
    slot_->what.store(outer_);
    slot_->since_ns.store(outer_since_);
}

}  // namespace cumemctl
