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
    // After a fence that ended well every key is here. After one that did not (a rank never joined it:
    // Slurm's fence then waits for PMIxTimeout, whatever PMIX_TIMEOUT says), each get asks the rank's
    // own server (a direct modex), waiting a little for a rank that is only late: the ranks that came
    // are told from the ones that did not.
    const ipc::Timeout each = fenced.ok ? request.timeout : std::min(request.timeout, ipc::Timeout{1000});
    const std::vector<std::uint32_t> asked(wanted.begin(), wanted.end());
    const std::vector<pmix::Client::Got> got = client_.get(asked, key_of(kind, request.id.run), each);
    std::set<int> missing;
    std::string why;
    const std::size_t max = cards ? kMaxCardBytes : kMaxRowBytes;
    for (std::size_t i = 0; i < asked.size(); ++i) {
        const int r = static_cast<int>(asked[i]);
        const std::optional<std::string>& value = got[i].value;
        if (!value) {
            missing.insert(r);
            if (why.empty()) why = got[i].why.error;
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
