// The rendezvous folder of fabric-matrix: atomic 0600 publication that never replaces a file, and
// size-bounded reads that refuse links, other kinds of file and oversized files; unsafe folders.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "base/error.hpp"
#include "matrix/rendezvous_dir.hpp"

using namespace cumemctl;
using namespace cumemctl::matrix;

TEST_CASE("a published file is there whole, mode 0600, and is never replaced") {
    RendezvousDir dir = RendezvousDir::make_private();
    struct stat st {};
    REQUIRE(stat(dir.path().c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0700);
    const mode_t old = umask(0);
    dir.publish("run.card.0", "{\"a\": 1}");
    umask(old);
    REQUIRE(stat((dir.path() + "/run.card.0").c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0600);
    const FileRead r = dir.read("run.card.0", 100);
    CHECK(r.usable());
    CHECK(r.content == "{\"a\": 1}");
    CHECK_THROWS_WITH_AS(dir.publish("run.card.0", "other"), doctest::Contains("File exists"), Error);
    CHECK(dir.read("run.card.0", 100).content == "{\"a\": 1}");
    // No temporary file is left behind, either way.
    CHECK(dir.names() == std::vector<std::string>{"run.card.0"});
    CHECK_FALSE(dir.read("run.card.1", 100).present);
    dir.remove("run.card.0");
    dir.remove("run.card.0");
    CHECK_FALSE(dir.exists("run.card.0"));
    const std::string path = dir.path();
    dir.remove_all();
    CHECK(access(path.c_str(), F_OK) != 0);
}

TEST_CASE("a link, a fifo, an oversized file and a file others may write are refused with the reason") {
    RendezvousDir dir = RendezvousDir::make_private();
    const std::string p = dir.path();
    std::ofstream(p + "/target") << "{}";
    REQUIRE(symlink((p + "/target").c_str(), (p + "/link").c_str()) == 0);
    REQUIRE(mkfifo((p + "/fifo").c_str(), 0600) == 0);
    std::ofstream(p + "/big") << std::string(200, 'x');
    chmod((p + "/big").c_str(), 0600);
    std::ofstream(p + "/open") << "{}";
    chmod((p + "/open").c_str(), 0666);
    CHECK(dir.read("link", 100).refusal == "is a symbolic link");
    CHECK(dir.read("fifo", 100).refusal == "is not a regular file");
    CHECK(dir.read("big", 100).refusal == "is 200 bytes, more than the 100 such a file may have");
    CHECK(dir.read("open", 100).refusal == "has mode 0666: others may write it");
    // A link is never followed for writing either: the publication goes to a new file or fails.
    CHECK_THROWS_AS(dir.publish("link", "x"), Error);
    CHECK(dir.read("target", 100).content == "{}");
    dir.remove_all();
}

TEST_CASE("a folder others may write without the sticky bit is refused; with it, or private, it is taken") {
    CHECK(unsafe_folder_reason(0700, 1000, 1000) == std::nullopt);
    CHECK(unsafe_folder_reason(01777, 0, 1000) == std::nullopt);
    CHECK(unsafe_folder_reason(0755, 0, 0) == std::nullopt);
    REQUIRE(unsafe_folder_reason(0777, 0, 0).has_value());
    CHECK(unsafe_folder_reason(0777, 0, 0)->find("others") != std::string::npos);
    CHECK(unsafe_folder_reason(0770, 1000, 1000)->find("the group") != std::string::npos);
    // Another user's folder: its owner may rename any file in it, sticky bit or not.
    REQUIRE(unsafe_folder_reason(01777, 1001, 1000).has_value());
    CHECK(unsafe_folder_reason(0755, 1001, 0)->find("user id 1001") != std::string::npos);
    RendezvousDir dir = RendezvousDir::make_private();
    const std::string p = dir.path() + "/shared";
    REQUIRE(mkdir(p.c_str(), 0700) == 0);
    chmod(p.c_str(), 0777);
    try {
        RendezvousDir::open(p);
        FAIL("an unsafe folder was taken");
    } catch (const Error& e) {
        CHECK(e.exit_code() == ExitCode::permission);
        CHECK(e.problem().cause.find("mode 0777") != std::string::npos);
    }
    chmod(p.c_str(), 01777);
    CHECK_NOTHROW(RendezvousDir::open(p));
    REQUIRE(symlink(p.c_str(), (dir.path() + "/linked").c_str()) == 0);
    CHECK_THROWS_WITH_AS(RendezvousDir::open(dir.path() + "/linked"), doctest::Contains("symbolic link"), Error);
    CHECK_THROWS_WITH_AS(RendezvousDir::open(dir.path() + "/none"), doctest::Contains("No such file"), Error);
    rmdir(p.c_str());
    dir.remove_all();
}
