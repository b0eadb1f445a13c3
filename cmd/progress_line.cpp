#include "progress_line.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

namespace cumemctl::cmd {
namespace {

constexpr auto kQuietFor = std::chrono::seconds(2);
constexpr auto kRedraw = std::chrono::milliseconds(200);

// The live line's state, shared with its drawing thread.
struct Line {
    std::mutex mutex;
    std::condition_variable wake;
    std::string command;
    std::string what;
    bool stopping = false;
    bool drawn = false;
    std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
    std::thread drawer;
};

std::mutex g_mutex;
Line* g_line = nullptr;

void draw_until_stopped(Line& line) {
    std::unique_lock<std::mutex> lock(line.mutex);
    std::string shown;
    while (!line.wake.wait_for(lock, kRedraw, [&line] { return line.stopping; })) {
        if (line.what.empty() || line.what == shown) continue;
        if (std::chrono::steady_clock::now() - line.started < kQuietFor) continue;
        std::fprintf(stderr, "\r\033[K%s: %s", line.command.c_str(), line.what.c_str());
        std::fflush(stderr);
        shown = line.what;
        line.drawn = true;
    }
}

}  // namespace

ProgressLine::ProgressLine(bool enabled, std::string command) {
    if (!enabled) return;
    owner_ = true;
    auto* line = new Line;
    line->command = std::move(command);
    line->drawer = std::thread([line] { draw_until_stopped(*line); });
    const std::lock_guard<std::mutex> lock(g_mutex);
    g_line = line;
}

ProgressLine::~ProgressLine() {
    if (!owner_) return;
    Line* line = nullptr;
    {
        const std::lock_guard<std::mutex> lock(g_mutex);
        line = g_line;
        g_line = nullptr;
    }
    if (line == nullptr) return;
    {
        const std::lock_guard<std::mutex> lock(line->mutex);
        line->stopping = true;
    }
    line->wake.notify_all();
    line->drawer.join();
    if (line->drawn) std::fputs("\r\033[K", stderr);
    delete line;
}

void progress_say(std::string what) {
    const std::lock_guard<std::mutex> lock(g_mutex);
    if (g_line == nullptr) return;
    const std::lock_guard<std::mutex> line_lock(g_line->mutex);
    g_line->what = std::move(what);
}

}  // namespace cumemctl::cmd
