// The folder rendezvous (rendezvous.hpp): files published atomically, polled until they come.
#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "base/interrupt.hpp"
#include "matrix/rank_run.hpp"
#include "matrix/rendezvous.hpp"
#include "util/stopwatch.hpp"

namespace cumemctl::matrix {
namespace {

using Clock = std::chrono::steady_clock;

std::string file_name(RecordKind kind, const std::string& run, int rank) {
    return kind == RecordKind::card ? card_name(run, rank) : row_name(run, rank);
}

// Polls the folder until every rank of `wanted` has its file, or the timeout; `found(rank, read)` is
// called once per rank when its file appears (a refused one too). Returns the ranks still missing.
template <class NameOf, class Found>
std::set<int> wait_for_files(const RendezvousDir& dir, std::set<int> wanted, NameOf name_of, std::size_t max_bytes,
                             const RankRequest& request, Found found) {
    const auto deadline = Clock::now() + request.timeout;
    while (true) {
        for (auto it = wanted.begin(); it != wanted.end();) {
            const FileRead r = dir.read(name_of(*it), max_bytes);
            if (r.present) {
                found(*it, r);
                it = wanted.erase(it);
            } else {
                ++it;
            }
        }
        if (wanted.empty() || Clock::now() >= deadline) return wanted;
        check_interrupted();
        std::this_thread::sleep_for(request.poll);
    }
}

// Polls until none of `names` exists, or the timeout; returns those still there.
std::vector<std::string> wait_for_gone(const RendezvousDir& dir, std::vector<std::string> names,
                                       const RankRequest& request) {
    const auto deadline = Clock::now() + request.timeout;
    while (true) {
        std::erase_if(names, [&](const std::string& n) { return !dir.exists(n); });
        if (names.empty() || Clock::now() >= deadline) return names;
        check_interrupted();
        std::this_thread::sleep_for(request.poll);
    }
}

}  // namespace

std::string list_ranks(const std::set<int>& ranks) {
    std::string out;
    for (const int r : ranks) out += (out.empty() ? "" : ", ") + std::to_string(r);
    return out;
}

void FolderRendezvous::publish(RecordKind kind, const RankRequest& request, const std::string& content, StepLog& log) {
    const std::string name = file_name(kind, request.id.run, request.id.rank);
    log.time(kind == RecordKind::card ? "publish-card" : "publish-row", "linkat", [&] { dir_.publish(name, content); });
    mine_.push_back(name);
}

std::set<int> FolderRendezvous::collect(RecordKind kind, const RankRequest& request, std::set<int> wanted,
                                        const RecordFound& found, StepLog& log) {
    Stopwatch watch;
    std::set<int> missing = wait_for_files(
        dir_, std::move(wanted), [&](int r) { return file_name(kind, request.id.run, r); },
        kind == RecordKind::card ? kMaxCardBytes : kMaxRowBytes, request, found);
    const bool cards = kind == RecordKind::card;
    log.note(cards ? "wait-cards" : "wait-rows", watch.seconds(),
             missing.empty() ? (cards ? "every card is in" : "every row is in")
                             : (cards ? "never came: rank " : "no row: rank ") + list_ranks(missing));
    return missing;
}

void FolderRendezvous::finish(const RankRequest& request, const std::set<int>& with_rows,
                              std::vector<std::string>& warnings, StepLog& log) {
    const std::string& run = request.id.run;
    const std::string done = done_name(run, request.id.rank);
    try {
        log.time("publish-done", "linkat", [&] { dir_.publish(done, "{}"); });
    } catch (const Error&) {
        return;  // the name is taken: this rank cannot say it is done, and leaves its files to the others
    }
    Stopwatch watch;
    const std::set<int> late = wait_for_files(
        dir_, with_rows, [&](int r) { return done_name(run, r); }, 64, request, [](int, const FileRead&) {});
    log.note("wait-done", watch.seconds(), late.empty() ? "every rank is done" : "late: " + list_ranks(late));
    if (!late.empty()) {
        warnings.push_back(fmt::format("rank(s) {} did not finish within {}; this rank's files are removed anyway",
                                       list_ranks(late), ipc::describe(request.timeout)));
    }
    std::vector<std::string> rows_left;
    for (const int r : with_rows) {
        if (!late.contains(r)) rows_left.push_back(row_name(run, r));
    }
    for (const auto& name : mine_) dir_.remove(name);
    mine_.clear();
    const std::vector<std::string> left = wait_for_gone(dir_, rows_left, request);
    if (!left.empty()) warnings.push_back(fmt::format("{} file(s) of other ranks were still there", left.size()));
    dir_.remove(done);
}

void FolderRendezvous::withdraw() noexcept {
    for (const auto& name : mine_) dir_.remove(name);
    mine_.clear();
}

}  // namespace cumemctl::matrix
