#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "base/error.hpp"
#include "util/file_mode.hpp"
#include "util/user_group.hpp"

using namespace cumemctl;

TEST_CASE("modes are octal permission bits") {
    CHECK(parse_mode("0600", "--mode") == 0600);
    CHECK(parse_mode("600", "--mode") == 0600);
    CHECK(parse_mode("0o660", "--mode") == 0660);
    CHECK(parse_mode("0", "--mode") == 0);
    CHECK(parse_mode("0777", "--mode") == 0777);
    CHECK(format_mode(0600) == "0600");
    CHECK(format_mode(S_IFCHR | 0666) == "0666");
    for (const char* bad : {"", "8", "0x600", "u=rw", "00000", "-600", "1777", "4755", "0o"}) {
        CAPTURE(bad);
        CHECK_THROWS_AS(parse_mode(bad, "--mode"), Error);
    }
    try {
        parse_mode("u+rw", "--mode");
    } catch (const Error& e) {
        CHECK(e.exit_code() == ExitCode::usage);
        CHECK(e.problem().message == "invalid --mode 'u+rw': not an octal mode");
    }
}

TEST_CASE("owners resolve names and numbers as chown does") {
    const Owner root = resolve_owner("root", "--owner");
    CHECK(root.uid == 0);
    CHECK(root.gid == 0);
    CHECK(root.user == "root");
    CHECK(format_owner(root) == "root:root");
    const Owner numeric = resolve_owner("0:12345", "--owner");
    CHECK(numeric.uid == 0);
    CHECK(numeric.gid == 12345);
    CHECK(format_owner(numeric) == "root:12345");
    CHECK(format_owner(owner_of(4000000, 4000001)) == "4000000:4000001");
    for (const char* bad :
         {"", ":0", "root:", "no-such-user-here", "root:no-such-group-here", "4000000", "-1", "4294967295:0"}) {
        CAPTURE(bad);
        try {
            resolve_owner(bad, "--owner");
            FAIL("accepted");
        } catch (const Error& e) {
            CHECK(e.exit_code() == ExitCode::usage);
            CHECK(e.problem().message.find("invalid --owner") == 0);
        }
    }
}

TEST_CASE("others_can_change names who besides root can change a file or folder") {
    struct stat st {};
    st.st_mode = S_IFDIR | 0755;
    CHECK_FALSE(others_can_change(st));
    st.st_uid = 1000;
    CHECK(others_can_change(st) == "belongs to uid 1000");
    CHECK_FALSE(others_can_change(st, 1000));  // this process's own user
    st.st_uid = 0;
    st.st_gid = 27;
    st.st_mode = S_IFDIR | 0775;
    CHECK(others_can_change(st) == "is writable by its group, gid 27 (mode 0775)");
    st.st_mode = S_IFDIR | 01777;
    CHECK(others_can_change(st) == "is writable by every user (mode 1777)");
    CHECK_FALSE(others_can_change(st, 0, true));  // a sticky folder such as /tmp, where others may say so
    st.st_mode = S_IFREG | 01777;
    CHECK(others_can_change(st, 0, true) == "is writable by every user (mode 1777)");  // a file is no folder
}

namespace {

// A temporary folder, root's and 0755, removed with what is in it.
struct TempTree {
    std::string path;
    TempTree() {
        char name[] = "/tmp/cumemctl-safe-XXXXXX";
        REQUIRE(::mkdtemp(name) != nullptr);
        path = name;
        REQUIRE(::chmod(name, 0755) == 0);
    }
    ~TempTree() { std::filesystem::remove_all(path); }
    std::string make(const std::string& name, mode_t mode, bool folder) const {
        std::string p = path + "/" + name;
        if (folder) {
            REQUIRE(::mkdir(p.c_str(), 0700) == 0);
        } else {
            std::ofstream(p) << "x";
        }
        REQUIRE(::chmod(p.c_str(), mode) == 0);
        return p;
    }
};

}  // namespace

TEST_CASE("unsafe_path walks a path as the kernel does, each link's folder and target looked at") {
    if (::geteuid() != 0) return;  // what root owns is made by root
    const TempTree t;
    const std::string safe = t.make("safe", 0755, true);
    const std::string lib = t.make("safe/lib.so", 0644, false);
    CHECK_FALSE(unsafe_path(lib));
    CHECK_FALSE(unsafe_path(t.path + "/safe/../safe/./lib.so"));
    CHECK_FALSE(unsafe_path(t.path + "/safe/missing.so"));  // nothing to load: the loader says so
    const std::string open = t.make("open", 0777, true);
    t.make("open/lib.so", 0644, false);
    auto u = unsafe_path(open + "/lib.so");
    REQUIRE(u);
    CHECK(u->path == open);
    CHECK(u->why == "is writable by every user (mode 0777)");
    // A link in a safe folder to a file in an open one: the target's folder.
    REQUIRE(::symlink("../open/lib.so", (safe + "/via-link.so").c_str()) == 0);
    u = unsafe_path(safe + "/via-link.so");
    REQUIRE(u);
    CHECK(u->path == open);
    // A link held in an open folder to a safe file: the folder that holds the link.
    REQUIRE(::symlink(lib.c_str(), (open + "/to-safe.so").c_str()) == 0);
    u = unsafe_path(open + "/to-safe.so");
    REQUIRE(u);
    CHECK(u->path == open);
    // A file that others can write, and one that another user owns.
    const std::string wide = t.make("safe/wide.so", 0664, false);
    CHECK(unsafe_path(wide)->path == wide);
    REQUIRE(::chown(lib.c_str(), 65534, 65534) == 0);
    CHECK(unsafe_path(lib)->why == "belongs to uid 65534");
    // A sticky folder that every user can write: root's file in it passes.
    const std::string sticky = t.make("sticky", 01777, true);
    const std::string in_sticky = t.make("sticky/lib.so", 0644, false);
    CHECK_FALSE(unsafe_path(in_sticky));
    // A loop of links ends.
    REQUIRE(::symlink("loop2", (safe + "/loop1").c_str()) == 0);
    REQUIRE(::symlink("loop1", (safe + "/loop2").c_str()) == 0);
    CHECK(unsafe_path(safe + "/loop1")->why == "has too many symbolic links on the way");
}

TEST_CASE("unsafe_for_root passes a bare library name: the loader's search of the system's folders") {
    CHECK_FALSE(unsafe_for_root("libcuda.so.1"));
    CHECK_NOTHROW(require_safe_for_root("libcuda.so.1", "the driver library", "x"));
}
