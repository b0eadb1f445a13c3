// Where the ranks of a distributed fabric-matrix run meet: each rank publishes its card, collects the
// others' cards, then publishes its row and collects the rows. Two ways, one interface: a folder that
// every rank sees (FolderRendezvous, over rendezvous_dir: the files are untrusted input), or the PMIx
// server of the launcher (PmixRendezvous: put, commit, a fence that collects, get). rank_run works
// through it and never knows which.
#pragma once

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "matrix/rendezvous_dir.hpp"
#include "pmix/pmix_client.hpp"
#include "steps/step_log.hpp"

namespace cumemctl::matrix {

struct RankRequest;

// "1, 3, 4": ranks as messages list them.
std::string list_ranks(const std::set<int>& ranks);

// What a rank publishes and collects.
enum class RecordKind { card, row };

// Called once per rank whose record arrived (a refused one too: FileRead says why).
using RecordFound = std::function<void(int rank, const FileRead& record)>;

// How ranks meet: through a shared folder, or through the PMIx server of the launcher.
enum class RendezvousKind { folder, pmix };
// "folder" or "pmix", as the report names them.
inline std::string_view rendezvous_kind_name(RendezvousKind kind) {
    return kind == RendezvousKind::pmix ? "pmix" : "folder";
}

class Rendezvous {
public:
    virtual ~Rendezvous() = default;
    virtual RendezvousKind kind() const = 0;
    // For the report: the folder's path, or the PMIx namespace, library and version.
    virtual std::string where() const = 0;
    // Publishes this rank's record, recorded as the step "publish-card" or "publish-row". Throws Error
    // when it cannot (a folder where the name is taken: another run of the same name).
    virtual void publish(RecordKind kind, const RankRequest& request, const std::string& content, StepLog& log) = 0;
    // Waits until every rank of `wanted` has published its record of `kind`, or request.timeout has
    // passed; calls `found` for each that arrived; notes "wait-cards" or "wait-rows". Returns the ranks
    // whose record never came.
    virtual std::set<int> collect(RecordKind kind, const RankRequest& request, std::set<int> wanted,
                                  const RecordFound& found, StepLog& log) = 0;
    // The end of a run that keeps nothing: the folder's ranks say they are done, wait for each other
    // and remove their files (what was not tidy goes into `warnings`); PMIx has nothing to remove.
    virtual void finish(const RankRequest& request, const std::set<int>& with_rows, std::vector<std::string>& warnings,
                        StepLog& log) = 0;
    // A stop (SIGINT, SIGTERM): what this rank published is taken back where it can be. Never throws.
    virtual void withdraw() noexcept = 0;
};

// The folder: files "RUN.card.R", "RUN.row.R", "RUN.done.R" (records.hpp), polled every request.poll.
class FolderRendezvous final : public Rendezvous {
public:
    explicit FolderRendezvous(const RendezvousDir& dir) : dir_(dir) {}
    RendezvousKind kind() const override { return RendezvousKind::folder; }
    std::string where() const override { return dir_.path(); }
    void publish(RecordKind kind, const RankRequest& request, const std::string& content, StepLog& log) override;
    std::set<int> collect(RecordKind kind, const RankRequest& request, std::set<int> wanted, const RecordFound& found,
                          StepLog& log) override;
    void finish(const RankRequest& request, const std::set<int>& with_rows, std::vector<std::string>& warnings,
                StepLog& log) override;
    void withdraw() noexcept override;

private:
    const RendezvousDir& dir_;
    std::vector<std::string> mine_;  // the files this rank published and has not removed
};

// The launcher's PMIx server: keys "cumemctl.RUN.card" and "cumemctl.RUN.row" of each rank; collect is
// a fence over the job with PMIx's timeout, then a get of every wanted rank's key (each bounded too),
// so that a rank that never came or died is named.
class PmixRendezvous final : public Rendezvous {
public:
    explicit PmixRendezvous(pmix::Client& client) : client_(client) {}
    RendezvousKind kind() const override { return RendezvousKind::pmix; }
    std::string where() const override;
    void publish(RecordKind kind, const RankRequest& request, const std::string& content, StepLog& log) override;
    std::set<int> collect(RecordKind kind, const RankRequest& request, std::set<int> wanted, const RecordFound& found,
                          StepLog& log) override;
    void finish(const RankRequest&, const std::set<int>&, std::vector<std::string>&, StepLog&) override {}
    void withdraw() noexcept override {}

private:
    pmix::Client& client_;
};

}  // namespace cumemctl::matrix
