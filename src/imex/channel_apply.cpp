#include "imex/channel_apply.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

#include "base/enum_words.hpp"
#include "util/unique_fd.hpp"

namespace cumemctl::imex {
namespace {

// How often one channel is looked at again when other processes keep changing it.
constexpr int kRounds = 5;

// The result of one system-call step: 0, or the errno and the call that failed.
struct Step {
    int error = 0;
    const char* call = "";
};

Step failed(const char* call) {
    return Step{errno, call};
}

// What a step says when the file at a name is not the node it made or found: another process swapped
// it, and it is left alone.
constexpr int kSwapped = ESTALE;
constexpr const char* kSwappedCall = "fstat (another file took the node's name)";

// A name no other run uses: ".channel7.cumemctl-PID-SEQ-RANDOM" (hidden, not "channel*").
std::string temp_name(const std::string& name) {
    static std::atomic<unsigned> sequence{0};
    unsigned random = 0;
    if (getrandom(&random, sizeof random, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof random)) random = 0;
    // Not cached: a forked child has another pid.
    return fmt::format(".{}.cumemctl-{}-{}-{:08x}", name, ::getpid(), sequence++, random);
}

// The node at `name`, opened without following a link and without opening its device (O_PATH), and
// checked through that descriptor to be the character device `want`: every later change goes through
// the descriptor, so no name swapped in meanwhile is ever changed. `made`: this run made it a moment
// ago (owned by this process's user, mode 0, one link), so a node put there by anyone else is refused.
Step open_node(int dir_fd, const std::string& name, const NodeSpec& want, bool made, UniqueFd& node, struct stat& st) {
    node.reset(::openat(dir_fd, name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (!node.valid()) return failed("openat");
    if (::fstat(node.get(), &st) != 0) return failed("fstat");
    const bool right =
        S_ISCHR(st.st_mode) && major(st.st_rdev) == want.major && minor(st.st_rdev) == want.channel_minor();
    const bool ours = st.st_uid == ::geteuid() && st.st_nlink == 1 && (st.st_mode & 07777) == 0;
    if (!right || (made && !ours)) return Step{kSwapped, kSwappedCall};
    return {};
}

// chmod through the node's descriptor: an O_PATH descriptor takes no fchmod, so through its
// /proc/self/fd entry, which names the open file itself, never a path looked up again. Without /proc
// it fails: nothing is changed by name.
Step chmod_node(int node_fd, mode_t mode) {
    const std::string self = fmt::format("/proc/self/fd/{}", node_fd);
    if (::chmod(self.c_str(), mode) != 0) return failed("chmod /proc/self/fd");
    return {};
}

Step chown_node(int node_fd, uid_t uid, gid_t gid) {
    if (::fchownat(node_fd, "", uid, gid, AT_EMPTY_PATH) != 0) return failed("fchownat");
    return {};
}

// Whether `name` is now the node open as `st` (after a rename by name).
bool same_node(int dir_fd, const std::string& name, const struct stat& st) {
    struct stat now {};
    return ::fstatat(dir_fd, name.c_str(), &now, AT_SYMLINK_NOFOLLOW) == 0 && now.st_ino == st.st_ino &&
           now.st_dev == st.st_dev;
}

// Puts the finished node, open as `node_fd`, at `name`. `exclusive`: a link to the open node itself
// (linkat AT_EMPTY_PATH, root's CAP_DAC_READ_SEARCH), which never replaces a node (EEXIST) and never
// links whatever another process put at the temporary name. Otherwise the rename of the temporary
// name replaces the node atomically; `renamed` says the temporary name is gone.
Step move_into_place(int dir_fd, int node_fd, const std::string& tmp, const std::string& name, bool exclusive,
                     bool& renamed) {
    if (exclusive) {
        if (::linkat(node_fd, "", dir_fd, name.c_str(), AT_EMPTY_PATH) == 0) return {};
        // ENOENT: the open node lost its last name (another file took the temporary one).
        return errno == ENOENT ? Step{kSwapped, kSwappedCall} : failed("linkat");
    }
    renamed = ::renameat(dir_fd, tmp.c_str(), dir_fd, name.c_str()) == 0;
    return renamed ? Step{} : failed("renameat");
}

// Makes the node under a temporary name, mode 0 until its owner is set, sets owner and mode through
// its descriptor, then puts it in place. What another process renames over the temporary name is
// never changed, and never linked into place; a rename that replaces a node (--force) checks after the
// fact that the node in place is the one made.
Step make_node(int dir_fd, const std::string& name, const NodeSpec& want, bool exclusive) {
    std::string tmp;
    for (int attempt = 0;; ++attempt) {
        tmp = temp_name(name);
        if (::mknodat(dir_fd, tmp.c_str(), S_IFCHR | 0, makedev(want.major, want.channel_minor())) == 0) break;
        if (errno != EEXIST || attempt == 3) return failed("mknodat");
    }
    UniqueFd node;
    struct stat st {};
    Step step = open_node(dir_fd, tmp, want, true, node, st);
    // What another process put at the temporary name is not ours to remove.
    if (step.error == kSwapped) return step;
    if (step.error == 0) step = chown_node(node.get(), want.uid, want.gid);
    if (step.error == 0) step = chmod_node(node.get(), want.mode);
    bool renamed = false;
    if (step.error == 0) step = move_into_place(dir_fd, node.get(), tmp, name, exclusive, renamed);
    if (step.error == 0 && !same_node(dir_fd, name, st)) step = Step{kSwapped, kSwappedCall};
    // A renamed node has left its temporary name; a linked or failed one still has it.
    if (!renamed && same_node(dir_fd, tmp, st)) ::unlinkat(dir_fd, tmp.c_str(), 0);
    return step;
}

// Sets owner and mode through the node's descriptor, never granting more than the old or the new state
// does: first the common bits, then the owner, then the wanted mode.
Step fix_node(int dir_fd, const std::string& name, const NodeState& have, const NodeSpec& want) {
    UniqueFd node;
    struct stat st {};
    if (Step s = open_node(dir_fd, name, want, false, node, st); s.error != 0) return s;
    // The node as it is now, which another process may have changed since the plan looked.
    if (node_state_from_stat(st).uid != have.uid || node_state_from_stat(st).gid != have.gid ||
        (st.st_mode & 07777) != have.mode) {
        return Step{kSwapped, kSwappedCall};
    }
    const mode_t common = have.mode & want.mode;
    if (common != have.mode) {
        if (Step s = chmod_node(node.get(), common); s.error != 0) return s;
    }
    if (have.uid != want.uid || have.gid != want.gid) {
        if (Step s = chown_node(node.get(), want.uid, want.gid); s.error != 0) return s;
    }
    if (want.mode != common) return chmod_node(node.get(), want.mode);
    return {};
}

Step carry_out(int dir_fd, const std::string& name, const ChannelOutcome& out) {
    switch (out.plan.change) {
        case Change::create:
            return make_node(dir_fd, name, out.want, true);
        case Change::replace:
            return make_node(dir_fd, name, out.want, false);
        case Change::fix:
            return fix_node(dir_fd, name, out.found, out.want);
        case Change::remove:
            return ::unlinkat(dir_fd, name.c_str(), 0) == 0 ? Step{} : failed("unlinkat");
        case Change::none:
        case Change::keep:
        case Change::refuse:
            break;
    }
    return {};
}

Action done_action(Change change) {
    switch (change) {
        case Change::create:
            return Action::created;
        case Change::fix:
            return Action::fixed;
        case Change::replace:
            return Action::replaced;
        case Change::remove:
            return Action::removed;
        case Change::refuse:
            return Action::refused;
        case Change::keep:
            return Action::kept;
        case Change::none:
            break;
    }
    return Action::unchanged;
}

// Whether a failed step means another process changed the node since we looked.
bool raced(Change change, int error) {
    if (error == kSwapped) return true;
    if (change == Change::create) return error == EEXIST;
    return error == ENOENT && (change == Change::fix || change == Change::remove || change == Change::replace);
}

void set_error(ChannelOutcome& out, int error, std::string_view call) {
    out.action = Action::error;
    out.error_number = error;
    out.error = fmt::format("{}: {}", call, std::strerror(error));
}

constexpr auto kActionWords = enum_words<Action>({{Action::created, "created"},
                                                  {Action::kept, "kept"},
                                                  {Action::unchanged, "unchanged"},
                                                  {Action::fixed, "fixed"},
                                                  {Action::replaced, "replaced"},
                                                  {Action::removed, "removed"},
                                                  {Action::planned, "planned"},
                                                  {Action::refused, "refused"},
                                                  {Action::error, "error"}},
                                                 "error");

}  // namespace

std::string_view action_name(Action action) {
    return kActionWords.word(action);
}

Observation observe_node(int dir_fd, const std::string& name) {
    Observation o;
    struct stat st {};
    if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
        o.state = node_state_from_stat(st);
    } else if (errno != ENOENT) {
        o.error = errno;
    }
    return o;
}

ChannelOutcome preview_channel(int dir_fd, const NodeSpec& want, const PlanOptions& options) {
    ChannelOutcome out;
    out.want = want;
    if (dir_fd >= 0) {
        const Observation o = observe_node(dir_fd, channel_name(want.channel));
        if (o.error != 0) {
            set_error(out, o.error, "fstatat");
            return out;
        }
        out.found = o.state;
    }
    out.plan = plan_channel(want, out.found, options);
    out.action = out.plan.change == Change::none     ? Action::unchanged
                 : out.plan.change == Change::keep   ? Action::kept
                 : out.plan.change == Change::refuse ? Action::refused
                                                     : Action::planned;
    return out;
}

ChannelOutcome apply_channel(int dir_fd, const NodeSpec& want, const PlanOptions& options) {
    const std::string name = channel_name(want.channel);
    ChannelOutcome out;
    for (int round = 0; round < kRounds; ++round) {
        out = preview_channel(dir_fd, want, options);
        if (out.action != Action::planned) return out;
        const Step step = carry_out(dir_fd, name, out);
        if (step.error == 0) {
            out.action = done_action(out.plan.change);
            return out;
        }
        if (!raced(out.plan.change, step.error)) {
            set_error(out, step.error, step.call);
            return out;
        }
    }
    out.action = Action::error;
    out.error = "the node kept changing while imex-setup worked on it (another process is changing it)";
    return out;
}

std::optional<pid_t> temporary_owner(std::string_view name) {
    // ".channel<N>.cumemctl-<PID>-<SEQ>-<RANDOM>"
    constexpr std::string_view kPrefix = ".channel", kMarker = ".cumemctl-";
    if (name.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
    std::size_t i = kPrefix.size();
    const std::size_t digits = i;
    while (i < name.size() && name[i] >= '0' && name[i] <= '9') ++i;
    if (i == digits || name.substr(i, kMarker.size()) != kMarker) return std::nullopt;
    i += kMarker.size();
    long long pid = 0;
    const std::size_t pid_start = i;
    while (i < name.size() && name[i] >= '0' && name[i] <= '9' && pid < (1LL << 32)) pid = pid * 10 + (name[i++] - '0');
    if (i == pid_start || i >= name.size() || name[i] != '-' || pid <= 0 || pid >= (1LL << 31)) return std::nullopt;
    return static_cast<pid_t>(pid);
}

std::vector<std::string> remove_stale_temporaries(int dir_fd) {
    std::vector<std::string> removed;
    // A second descriptor for the listing: fdopendir takes the one it is given.
    const int list_fd = ::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (list_fd < 0) return removed;
    DIR* dir = ::fdopendir(list_fd);
    if (dir == nullptr) {
        ::close(list_fd);
        return removed;
    }
    std::vector<std::string> names;
    while (const dirent* e = ::readdir(dir)) names.emplace_back(e->d_name);
    ::closedir(dir);
    for (const auto& name : names) {
        const auto pid = temporary_owner(name);
        // A run that still lives may be between its mknod and its rename.
        if (!pid || ::kill(*pid, 0) == 0 || errno != ESRCH) continue;
        const Observation o = observe_node(dir_fd, name);
        if (o.error != 0 || o.state.kind != NodeKind::char_device) continue;
        if (::unlinkat(dir_fd, name.c_str(), 0) == 0) removed.push_back(name);
    }
    return removed;
}

}  // namespace cumemctl::imex
