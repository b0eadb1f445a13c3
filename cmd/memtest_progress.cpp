#include "memtest_progress.hpp"

#include <cstdio>

#include <fmt/format.h>

namespace cumemctl::cmd {

MemtestProgress::~MemtestProgress() {
    if (drawn_) std::fputs("\r\033[K", stderr);
}

void MemtestProgress::update(int device, const gpu::memtest::Progress& p) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    std::lock_guard<std::mutex> lock(mutex_);
    if (drawn_ && now - last_ < std::chrono::milliseconds(200)) return;
    last_ = now;
    drawn_ = true;
    const double done = static_cast<double>(p.bytes_done), total = static_cast<double>(p.bytes_total);
    const double rate = p.seconds > 0 ? done / p.seconds : 0;
    const double left = rate > 0 ? (total - done) / rate : 0;
    const int width = 24;
    const int filled = total > 0 ? static_cast<int>(width * done / total) : 0;
    fmt::print(stderr, "\r\033[KGPU {} [{}{}] {} pass {}/{}  {:.0f}/{:.0f} GB  {:.0f} GB/s  {:.1f} s left", device,
               std::string(static_cast<std::size_t>(filled), '#'),
               std::string(static_cast<std::size_t>(width - filled), '.'), p.pattern, p.pass, p.passes, done / 1e9,
               total / 1e9, rate / 1e9, left);
    std::fflush(stderr);
}

}  // namespace cumemctl::cmd
