// The node changes against a real temporary folder: they need root (CAP_MKNOD), as CI runs them.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "imex/channel_apply.hpp"
#include "imex/channel_dir.hpp"
#include "base/error.hpp"

using namespace cumemctl;
using namespace cumemctl::imex;

namespace {

// A temporary device root with dev/ in it, removed afterwards; the umask is 077 meanwhile, so that
// modes that depend on it would show.
struct TempRoot {
    std::string path;
    mode_t old_umask;
    TempRoot() : old_umask(::umask(077)) {
        char tmpl[] = "/tmp/cumemctl-unit-XXXXXX";
        path = ::mkdtemp(tmpl);
        std::filesystem::create_directory(path + "/dev");
    }
    ~TempRoot() {
        ::umask(old_umask);
        std::filesystem::remove_all(path);
    }
    std::string node(const std::string& name) const { return path + "/dev/nvidia-caps-imex-channels/" + name; }
};

struct stat lstat_of(const std::string& path) {
    struct stat st {};
    REQUIRE(::lstat(path.c_str(), &st) == 0);
    return st;
}

bool can_mknod() {
    return ::geteuid() == 0;
}

}  // namespace

TEST_CASE("the channel folder is made 0755 whatever the umask, and found again") {
    TempRoot root;
    {
        ChannelDir missing = open_channel_dir(open_dev_root(root.path), false);
        CHECK_FALSE(missing.fd.valid());
        CHECK(missing.state.kind == NodeKind::missing);
        CHECK(missing.path == root.path + "/dev/nvidia-caps-imex-channels");
    }
    ChannelDir made = open_channel_dir(open_dev_root(root.path), true);
    CHECK(made.created);
    CHECK(made.state.kind == NodeKind::directory);
    CHECK((lstat_of(made.path).st_mode & 07777) == 0755);
    ChannelDir again = open_channel_dir(open_dev_root(root.path), true);
    CHECK_FALSE(again.created);
    // Undo removes the folder this run made while it is empty, and never one that another run made.
    undo_channel_dir(again);
    CHECK(std::filesystem::exists(made.path));
    undo_channel_dir(made);
    CHECK_FALSE(std::filesystem::exists(made.path));
}

TEST_CASE("a channel folder that is a link or a file is refused") {
    TempRoot root;
    std::filesystem::create_directory(root.path + "/elsewhere");
    std::filesystem::create_directory_symlink(root.path + "/elsewhere", root.path + "/dev/nvidia-caps-imex-channels");
    try {
        open_channel_dir(open_dev_root(root.path), true);
        FAIL("accepted a link");
    } catch (const Error& e) {
        CHECK(e.exit_code() == ExitCode::failed);
        CHECK(e.problem().message.find("is a symbolic link, not a directory: refused") != std::string::npos);
    }
    CHECK(std::filesystem::is_empty(root.path + "/elsewhere"));
    CHECK_THROWS_AS(open_channel_dir(open_dev_root(root.path + "/nowhere"), true), Error);
}

TEST_CASE("apply_channel creates, leaves alone, fixes, replaces and removes") {
    if (!can_mknod()) {
        MESSAGE("skipped: making device nodes needs root");
        return;
    }
    TempRoot root;
    ChannelDir dir = open_channel_dir(open_dev_root(root.path), true);
    const int fd = dir.fd.get();
    NodeSpec want{2, 242, 65534, 65534, 0666};
    ChannelOutcome out = apply_channel(fd, want, {});
    CHECK(out.action == Action::created);
    struct stat st = lstat_of(root.node("channel2"));
    CHECK(S_ISCHR(st.st_mode));
    CHECK(st.st_rdev == makedev(242, 2));
    CHECK((st.st_mode & 07777) == 0666);  // not narrowed by the umask
    CHECK(st.st_uid == 65534);
    CHECK(apply_channel(fd, want, {}).action == Action::unchanged);

    want.uid = want.gid = 0;
    want.mode = 0600;
    out = apply_channel(fd, want, {});
    CHECK(out.action == Action::fixed);
    CHECK(out.found.uid == 65534);
    st = lstat_of(root.node("channel2"));
    CHECK((st.st_mode & 07777) == 0600);
    CHECK(st.st_uid == 0);

    REQUIRE(::mknodat(fd, "channel2", S_IFCHR | 0600, makedev(242, 9)) != 0);  // still there
    REQUIRE(::unlinkat(fd, "channel2", 0) == 0);
    REQUIRE(::mknodat(fd, "channel2", S_IFBLK | 0600, makedev(242, 2)) == 0);
    CHECK(apply_channel(fd, want, {}).action == Action::refused);
    CHECK(S_ISBLK(lstat_of(root.node("channel2")).st_mode));
    CHECK(apply_channel(fd, want, {false, true}).action == Action::replaced);
    st = lstat_of(root.node("channel2"));
    CHECK(S_ISCHR(st.st_mode));
    CHECK(st.st_rdev == makedev(242, 2));

    CHECK(apply_channel(fd, want, {true, false}).action == Action::removed);
    CHECK_FALSE(std::filesystem::exists(std::filesystem::symlink_status(root.node("channel2"))));
    CHECK(apply_channel(fd, want, {true, false}).action == Action::unchanged);
    // Nothing but the nodes is left behind: no temporary names.
    CHECK(std::filesystem::is_empty(dir.path));
}

TEST_CASE("apply_channel never touches a regular file, a folder or a link") {
    TempRoot root;
    ChannelDir dir = open_channel_dir(open_dev_root(root.path), true);
    const int fd = dir.fd.get();
    const NodeSpec want{0, 242, 0, 0, 0666};
    REQUIRE(::close(::openat(fd, "channel0", O_CREAT | O_WRONLY, 0640)) == 0);
    REQUIRE(::fchmodat(fd, "channel0", 0640, 0) == 0);
    REQUIRE(::mkdirat(fd, "channel1", 0700) == 0);
    REQUIRE(::symlinkat("/dev/null", fd, "channel2") == 0);
    for (int channel : {0, 1, 2}) {
        NodeSpec w = want;
        w.channel = channel;
        for (const PlanOptions& options : {PlanOptions{}, PlanOptions{false, true}, PlanOptions{true, true}}) {
            CHECK(apply_channel(fd, w, options).action == Action::refused);
        }
    }
    CHECK(S_ISREG(lstat_of(root.node("channel0")).st_mode));
    CHECK((lstat_of(root.node("channel0")).st_mode & 07777) == 0640);
    CHECK(S_ISDIR(lstat_of(root.node("channel1")).st_mode));
    CHECK(S_ISLNK(lstat_of(root.node("channel2")).st_mode));
}

TEST_CASE("preview_channel changes nothing") {
    TempRoot root;
    const NodeSpec want{0, 242, 0, 0, 0666};
    ChannelOutcome out = preview_channel(-1, want, {});
    CHECK(out.action == Action::planned);
    CHECK(out.plan.change == Change::create);
    ChannelDir dir = open_channel_dir(open_dev_root(root.path), true);
    out = preview_channel(dir.fd.get(), want, {});
    CHECK(out.action == Action::planned);
    CHECK(std::filesystem::is_empty(dir.path));
    CHECK(action_name(Action::planned) == "planned");
}

TEST_CASE("no descriptor is left open after the folder and the node changes") {
    auto open_fds = [] {
        std::size_t n = 0;
        for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
        return n;
    };
    TempRoot root;
    const std::size_t before = open_fds();
    {
        ChannelDir dir = open_channel_dir(open_dev_root(root.path), true);
        for (int channel = 0; channel < 4; ++channel) {
            const NodeSpec want{channel, 242, 0, 0, 0600};
            apply_channel(dir.fd.get(), want, {});
            apply_channel(dir.fd.get(), want, {true, false});
        }
        CHECK(open_fds() == before + 2);  // the folder and its parent, while the ChannelDir lives
    }
    CHECK(open_fds() == before);
    CHECK_THROWS_AS(open_channel_dir(open_dev_root(root.path + "/nowhere"), true), Error);
    CHECK(open_fds() == before);
}
