// The PMIx rendezvous (rendezvous.hpp): put and commit, then a fence that collects the data, then a get
// of each wanted rank's key. A rank that never put its key (it never came, or died first) is named by
// the get that finds nothing once the fence has ended, by success or by its timeout.
#include <algorithm>

#include <fmt/format.h>

#include "matrix/rank_run.hpp"
#include "matrix/rendezvous.hpp"
#include "util/stopwatch.hpp"

namespace cumemctl::matrix {
namespace {

std::string key_of(RecordKind kind, const std::string& run) {
    return fmt::format("cumemctl.{}.{}", run, kind == RecordKind::card ? "card" : "row");
}

}  // namespace

std::string PmixRendezvous::where() const {
    return fmt::format("PMIx namespace {} ({}, PMIx {})", client_.nspace(), client_.library(), client_.version());
}

void PmixRendezvous::publish(RecordKind kind, const RankRequest& request, const std::string& content, StepLog& log) {
    log.time(kind == RecordKind::card ? "publish-card" : "publish-row", "PMIx_Put", [&] {
        client_.put(key_of(kind, request.id.run), content);
        client_.commit();
    });
}

std::set<int> PmixRendezvous::collect(RecordKind kind, const RankRequest& request, std::set<int> wanted,
                                      const RecordFound& found, StepLog& log) {
    const bool cards = kind == RecordKind::card;
    Stopwatch watch;
    // The fence is over the whole job, except the rows' after a rank's card never came: then over the
    // ranks whose card came and this one, so that the missing rank does not hold the others again.
    std::vector<std::uint32_t> ranks;  // empty: the whole job
    if (!cards && static_cast<int>(wanted.size()) + 1 < request.id.ranks) {
        for (const int r : wanted) ranks.push_back(static_cast<std::uint32_t>(r));
        ranks.push_back(static_cast<std::uint32_t>(request.id.rank));
        std::sort(ranks.begin(), ranks.end());
    }
    const pmix::Outcome fenced = client_.fence(request.timeout, ranks);
    log.note(cards ? "fence-cards" : "fence-rows", watch.seconds(),
             fenced.ok ? "every rank reached the fence" : "PMIx_Fence: " + fenced.error);
    // After a fence that ended well every key is here; after one that did not, each get waits a little
    // for a rank that is only late.
    const ipc::Timeout each = fenced.ok ? request.timeout : std::min(request.timeout, ipc::Timeout{1000});
    std::set<int> missing;
    std::string why;
    for (const int r : wanted) {
        pmix::Outcome outcome;
        const std::optional<std::string> value =
            client_.get(static_cast<std::uint32_t>(r), key_of(kind, request.id.run), each, outcome);
        const std::size_t max = cards ? kMaxCardBytes : kMaxRowBytes;
        if (!value) {
            missing.insert(r);
            if (why.empty()) why = outcome.error;
        } else if (value->size() > max) {
            found(r, FileRead{true, "", fmt::format("is {} bytes, more than {}", value->size(), max)});
        } else {
            found(r, FileRead{true, *value, ""});
        }
    }
    log.note(cards ? "wait-cards" : "wait-rows", watch.seconds(),
             missing.empty() ? (cards ? "every card is in" : "every row is in")
                             : fmt::format("{}{} (PMIx_Get: {})", cards ? "never came: rank " : "no row: rank ",
                                           list_ranks(missing), why));
    return missing;
}

}  // namespace cumemctl::matrix
