#include "gpu/memtest/memtest_record.hpp"

#include <cstdlib>

#include <fmt/format.h>

#include "base/error.hpp"
#include "util/atomic_file.hpp"
#include "util/size.hpp"
#include "util/trusted_file.hpp"

namespace cumemctl::gpu::memtest {
namespace {

constexpr const char* kFormat = "cumemctl.memtest-state";

// The file's JSON, or a fresh document when it is absent or not ours. Throws Error (permission) where
// root may not believe it: its records would be copied into the file root writes.
nlohmann::json read_state(const std::string& path) {
    std::string refused;
    const auto text = try_read_trusted_text(path, refused);
    if (!refused.empty()) {
        throw Error(ExitCode::permission, refused,
                    "move the file away, or set CUMEMCTL_STATE_DIR to a folder that only root can change");
    }
    if (text) {
        auto j = nlohmann::json::parse(*text, nullptr, false);
        if (j.is_object() && j.value("format", "") == kFormat && j.contains("gpus") && j["gpus"].is_object()) return j;
    }
    return {{"format", kFormat}, {"version", 1}, {"gpus", nlohmann::json::object()}};
}

}  // namespace

std::string memtest_state_path() {
    const char* dir = std::getenv("CUMEMCTL_STATE_DIR");
    return fmt::format("{}/memtest.json", dir != nullptr && *dir != '\0' ? dir : kDefaultStateDir);
}

nlohmann::json to_json(const MemtestRecord& r) {
    return {{"uuid", r.uuid},
            {"host", r.host},
            {"finished", r.finished},
            {"finished_unix", r.finished_unix},
            {"status", r.status},
            {"reasons", r.reasons},
            {"bytes_tested", r.bytes_tested},
            {"free_at_start_bytes", r.free_at_start},
            {"mismatches", r.mismatches},
            {"patterns_run", r.patterns_run},
            {"seed", r.seed}};
}

std::string describe(const MemtestRecord& r) {
    const double coverage =
        r.free_at_start > 0 ? 100.0 * static_cast<double>(r.bytes_tested) / static_cast<double>(r.free_at_start) : 0;
    return fmt::format("last memtest {}: {}, {} ({} tested, {:.2f}% of the free memory)", r.finished, r.status,
                       r.reasons.empty() ? "no finding" : r.reasons.front(), format_size(r.bytes_tested), coverage);
}

void save_memtest_records(const std::string& path, const std::vector<MemtestRecord>& records) {
    nlohmann::json state = read_state(path);
    for (const MemtestRecord& r : records) state["gpus"][r.uuid] = to_json(r);
    write_file_atomically(path, state.dump(2) + "\n", 0644, MissingFolder::make);
}

void check_memtest_state(const std::string& path) {
    read_state(path);
}

std::optional<MemtestRecord> load_memtest_record(const std::string& path, const std::string& uuid, std::string* why) {
    auto say = [&](std::string text) {
        if (why != nullptr) *why = std::move(text);
        return std::nullopt;
    };
    std::string refused;
    const auto text = try_read_trusted_text(path, refused);
    if (!refused.empty()) return say(refused);
    if (!text) return say(fmt::format("no memtest was recorded ({} is absent or unreadable)", path));
    const auto j = nlohmann::json::parse(*text, nullptr, false);
    if (!j.is_object() || j.value("format", "") != kFormat || !j.contains("gpus") || !j["gpus"].is_object()) {
        return say(fmt::format("{} is not a memtest state file", path));
    }
    const auto it = j["gpus"].find(uuid);
    if (it == j["gpus"].end() || !it->is_object()) return say(fmt::format("no memtest of this GPU in {}", path));
    try {
        MemtestRecord r;
        r.uuid = uuid;
        r.host = it->value("host", "");
        r.finished = it->at("finished").get<std::string>();
        r.finished_unix = it->value("finished_unix", 0.0);
        r.status = it->at("status").get<std::string>();
        r.reasons = it->value("reasons", std::vector<std::string>{});
        r.bytes_tested = it->value("bytes_tested", 0ULL);
        r.free_at_start = it->value("free_at_start_bytes", 0ULL);
        r.mismatches = it->value("mismatches", 0ULL);
        r.patterns_run = it->value("patterns_run", std::vector<std::string>{});
        r.seed = it->value("seed", 0ULL);
        return r;
    } catch (const nlohmann::json::exception&) {
        return say(fmt::format("the entry of this GPU in {} is malformed", path));
    }
}

}  // namespace cumemctl::gpu::memtest
