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
