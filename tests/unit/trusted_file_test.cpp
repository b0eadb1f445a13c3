#include <doctest/doctest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "base/error.hpp"
#include "temp_tree.hpp"
#include "util/text_file.hpp"
#include "util/trusted_file.hpp"

using namespace cumemctl;
using testing_tree::TempTree;

namespace {

std::optional<UnsafePath> unsafe(const std::string& path, Links links = Links::follow) {
    return open_checked(path, Check::everything, links).unsafe;
}

std::string text_of(const CheckedOpen& o) {
    REQUIRE(o.fd.valid());
    return read_text_fd(o.fd.get(), "test", "test", "");
}

}  // namespace

TEST_CASE("open_checked walks a path as the kernel does, each link's folder and target looked at") {
    if (::geteuid() != 0) return;  // what root owns is made by root
    const TempTree t;
    const std::string safe = t.make("safe", 0755, true);
    const std::string lib = t.make("safe/lib.so", 0644, false, "the library");
    CHECK(text_of(open_checked(lib, Check::everything)) == "the library");
    CHECK(text_of(open_checked(t.path + "/safe/../safe/./lib.so", Check::everything)) == "the library");
    const CheckedOpen missing = open_checked(t.path + "/safe/missing.so", Check::everything);
    CHECK_FALSE(missing.unsafe);  // a folder only root can add to: missing is missing
    CHECK_FALSE(missing.fd.valid());
    CHECK(missing.error == ENOENT);
    const std::string open = t.make("open", 0777, true);
    t.make("open/lib.so", 0644, false);
    auto u = unsafe(open + "/lib.so");
    REQUIRE(u);
    CHECK(u->path == open);
    CHECK(u->why == "is writable by every user (mode 0777)");
    // A link in a safe folder to a file in an open one: the target's folder.
    REQUIRE(::symlink("../open/lib.so", (safe + "/via-link.so").c_str()) == 0);
    u = unsafe(safe + "/via-link.so");
    REQUIRE(u);
    CHECK(u->path == open);
    // A link held in an open folder to a safe file: the folder that holds the link.
    REQUIRE(::symlink(lib.c_str(), (open + "/to-safe.so").c_str()) == 0);
    CHECK(unsafe(open + "/to-safe.so")->path == open);
    // A link in the middle of the path, to a folder whose group can write it.
    const std::string group = t.make("group", 0775, true);
    t.make("group/lib.so", 0644, false);
    REQUIRE(::symlink("../group", (safe + "/mid").c_str()) == 0);
    u = unsafe(safe + "/mid/lib.so");
    REQUIRE(u);
    CHECK(u->path == group);
    CHECK(u->why == "is writable by its group, gid 0 (mode 0775)");
    // ".." after a link is the link target's parent, as the kernel resolves it.
    REQUIRE(::symlink("../open/", (safe + "/to-open").c_str()) == 0);
    CHECK(unsafe(safe + "/to-open/../safe/lib.so")->path == open);
    // A file that others can write, and one that another user owns.
    const std::string wide = t.make("safe/wide.so", 0664, false);
    CHECK(unsafe(wide)->path == wide);
    const std::string theirs = t.make("safe/theirs.so", 0644, false);
    REQUIRE(::chown(theirs.c_str(), 65534, 65534) == 0);
    CHECK(unsafe(theirs)->why == "belongs to uid 65534");
    // A loop of links ends.
    REQUIRE(::symlink("loop2", (safe + "/loop1").c_str()) == 0);
    REQUIRE(::symlink("loop1", (safe + "/loop2").c_str()) == 0);
    const CheckedOpen loop = open_checked(safe + "/loop1", Check::everything);
    CHECK_FALSE(loop.unsafe);  // not a matter of trust: the kernel's own error
    CHECK(loop.error == ELOOP);
    // Where no link is allowed, even one to a safe file is refused.
    REQUIRE(::symlink("lib.so", (safe + "/alias.so").c_str()) == 0);
    CHECK_FALSE(unsafe(safe + "/alias.so"));
    CHECK(unsafe(safe + "/alias.so", Links::refuse)->why == "is a symbolic link, and none is allowed here");
    // Only a regular file: a folder or a device is not loaded, run or read.
    CHECK(unsafe(safe)->why == "is a folder, not a file");
    REQUIRE(::mkfifo((safe + "/fifo").c_str(), 0644) == 0);
    CHECK(unsafe(safe + "/fifo")->why == "is not a regular file");
}

TEST_CASE("open_checked in a sticky folder: root's names pass, others' names and missing names do not") {
    if (::geteuid() != 0) return;
    const TempTree t;
    const std::string sticky = t.make("sticky", 01777, true);
    const std::string mine = t.make("sticky/lib.so", 0644, false, "root's");
    CHECK(text_of(open_checked(mine, Check::everything)) == "root's");
    // A missing name: another user could make it before the loader looks.
    auto u = unsafe(sticky + "/later.so");
    REQUIRE(u);
    CHECK(u->path == sticky + "/later.so");
    CHECK(u->why ==
          "does not exist, and " + sticky + " is writable by every user (mode 1777): another user could make it");
    // Another user's file, folder or link in it.
    const std::string theirs = t.make("sticky/theirs.so", 0644, false);
    REQUIRE(::chown(theirs.c_str(), 65534, 65534) == 0);
    CHECK(unsafe(theirs)->path == theirs);
    const std::string folder = t.make("sticky/sub", 0755, true);
    t.make("sticky/sub/lib.so", 0644, false);
    REQUIRE(::chown(folder.c_str(), 65534, 65534) == 0);
    CHECK(unsafe(folder + "/lib.so")->path == folder);
    REQUIRE(::symlink(mine.c_str(), (sticky + "/link.so").c_str()) == 0);
    REQUIRE(::lchown((sticky + "/link.so").c_str(), 65534, 65534) == 0);
    u = unsafe(sticky + "/link.so");
    REQUIRE(u);
    CHECK(u->why == "is a link of uid 65534 in " + sticky + ", a folder that others can add to");
    // A second name for root's file, which any user could have made there (a hard link).
    const std::string elsewhere = t.make("root-lib.so", 0644, false);
    REQUIRE(::link(elsewhere.c_str(), (sticky + "/hard.so").c_str()) == 0);
    u = unsafe(sticky + "/hard.so");
    REQUIRE(u);
    CHECK(u->why == "has 2 hard links, in " + sticky +
                        ", a folder that others can add to: any user could have made this name for root's file");
    // Missing in a folder that only root can add to is the caller's to report.
    CHECK_FALSE(unsafe(t.path + "/missing.so"));
}

TEST_CASE("try_read_trusted_text reads once: a missing name is missing, another user's file is refused") {
    if (::geteuid() != 0) return;
    const TempTree t;
    const std::string sticky = t.make("sticky", 01777, true);
    std::string refused;
    CHECK_FALSE(try_read_trusted_text(sticky + "/state.json", refused));
    CHECK(refused.empty());
    CHECK(try_read_trusted_text(t.make("sticky/root.json", 0644, false, "root's"), refused) == "root's");
    CHECK(refused.empty());
    const std::string theirs = t.make("sticky/theirs.json", 0644, false, "forged");
    REQUIRE(::chown(theirs.c_str(), 65534, 65534) == 0);
    CHECK_FALSE(try_read_trusted_text(theirs, refused));
    CHECK(refused == "refusing the file " + theirs + ": " + theirs + " belongs to uid 65534 in " + sticky +
                         ", a folder that others can add to");
}

TEST_CASE("a process started as root is judged as root after it drops to a user") {
    if (::geteuid() != 0) return;
    CHECK(judged_as_root());
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        const bool dropped = ::setresgid(65534, 65534, 65534) == 0 && ::setresuid(65534, 65534, 65534) == 0;
        ::_exit(dropped && ::geteuid() == 65534 && judged_as_root() ? 0 : 1);
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
}

TEST_CASE("open_checked reads the file it checked, whatever the name comes to mean afterwards") {
    const TempTree t;
    const std::string file = t.make("params", 0644, false, "first");
    const CheckedOpen opened = open_checked(file, ::geteuid() == 0 ? Check::everything : Check::none);
    REQUIRE(opened.fd.valid());
    // Replaced by another file under the same name after the check: the descriptor is still the first.
    const std::string other = t.make("other", 0644, false, "second");
    REQUIRE(std::rename(other.c_str(), file.c_str()) == 0);
    CHECK(text_of(opened) == "first");
}

TEST_CASE("open_trusted refuses with exit 4, naming the file and why; a bare name is the loader's") {
    CHECK(is_bare_name("libcuda.so.1"));
    CHECK_FALSE(is_bare_name("./libcuda.so.1"));
    if (::geteuid() != 0) return;
    const TempTree t;
    const std::string open = t.make("open", 0777, true);
    const std::string lib = t.make("open/lib.so", 0644, false);
    try {
        (void)open_trusted(lib, TrustUse{"the driver library", "give --libcuda another"});
        FAIL("no refusal");
    } catch (const Error& e) {
        CHECK(e.problem().exit_code == ExitCode::permission);
        CHECK(std::string(e.what()) ==
              "refusing the driver library " + lib + ": " + open + " is writable by every user (mode 0777)");
    }
    std::string why;
    CHECK_THROWS_AS(load_library(lib, 0, TrustUse{"the driver library", "x"}, why), Error);
}

TEST_CASE("open_checked of a folder: the folder is judged as those above it, a sticky one too") {
    if (::geteuid() != 0) return;
    const TempTree t;
    const std::string safe = t.make("safe", 0755, true);
    const CheckedOpen opened = open_checked(safe, Check::everything, Links::follow, true);
    CHECK_FALSE(opened.unsafe);
    CHECK(opened.fd.valid());
    const std::string sticky = t.make("sticky", 01777, true);
    CHECK(open_checked(sticky, Check::everything, Links::follow, true).unsafe->why ==
          "is writable by every user (mode 1777)");
}

TEST_CASE("open_checked with Check::links: only links that no other user could have placed are followed") {
    if (::geteuid() != 0) return;
    const TempTree t;
    const std::string safe = t.make("safe", 0755, true);
    // Another user's folder is written in, but a link in it is theirs to point anywhere.
    const std::string theirs = t.make("theirs", 0755, true);
    REQUIRE(::chown(theirs.c_str(), 65534, 65534) == 0);
    const CheckedOpen plain = open_checked(theirs, Check::links, Links::follow, true);
    CHECK_FALSE(plain.unsafe);
    CHECK(plain.fd.valid());
    REQUIRE(::symlink(safe.c_str(), (theirs + "/out").c_str()) == 0);
    REQUIRE(::lchown((theirs + "/out").c_str(), 65534, 65534) == 0);
    auto u = open_checked(theirs + "/out", Check::links, Links::follow, true).unsafe;
    REQUIRE(u);
    CHECK(u->path == theirs + "/out");
    CHECK(u->why == "is a link in " + theirs +
                        ", which belongs to uid 65534: whoever can change that folder chooses "
                        "where it leads");
    // Root's link in a folder only root can change is followed; another user's is not, wherever it is
    // (the folder may have been theirs when they made it), under either check.
    REQUIRE(::symlink(safe.c_str(), (t.path + "/roots").c_str()) == 0);
    CHECK(open_checked(t.path + "/roots", Check::links, Links::follow, true).fd.valid());
    REQUIRE(::symlink(safe.c_str(), (t.path + "/left").c_str()) == 0);
    REQUIRE(::lchown((t.path + "/left").c_str(), 65534, 65534) == 0);
    for (const Check check : {Check::links, Check::everything}) {
        u = open_checked(t.path + "/left", check, Links::follow, true).unsafe;
        REQUIRE(u);
        CHECK(u->why == "is a link of uid 65534: root follows only root's links");
    }
    // A link in the middle of the path counts as one at the end; "." names the folder reached.
    t.make("safe/sub", 0755, true);
    CHECK(open_checked(theirs + "/out/sub", Check::links, Links::follow, true).unsafe);
    CHECK(open_checked(safe + "/sub/.", Check::links, Links::follow, true).fd.valid());
    CHECK(open_checked(safe + "/sub/..", Check::everything, Links::follow, true).fd.valid());
    CHECK(open_checked(safe + "/.", Check::everything).error == EISDIR);
}

TEST_CASE("a refusal's remedy never asks root to take over what another user made") {
    if (::geteuid() != 0) return;
    const TempTree t;
    const std::string lib = t.make("lib.so", 0644, false);
    REQUIRE(::chown(lib.c_str(), 65534, 65534) == 0);
    try {
        (void)open_trusted(lib, TrustUse{"the driver library", "give --libcuda another"});
        FAIL("not refused");
    } catch (const Error& e) {
        CHECK(e.problem().remedy.find("chown root") == std::string::npos);
        CHECK(e.problem().remedy.find("install -o root -g root -m 0644 " + lib + " DIR/") != std::string::npos);
    }
    const std::string open = t.make("open", 0777, true);
    const std::string inside = t.make("open/lib.so", 0644, false);
    try {
        (void)open_trusted(inside, TrustUse{"the driver library", "give --libcuda another"});
        FAIL("not refused");
    } catch (const Error& e) {
        CHECK(e.problem().remedy == "chmod go-w " + open + ", or give --libcuda another");
    }
}
