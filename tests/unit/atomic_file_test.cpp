#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "base/error.hpp"
#include "temp_tree.hpp"
#include "util/atomic_file.hpp"

using namespace cumemctl;
using testing_tree::TempTree;

namespace {

std::string file_text(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

std::size_t entries(const std::string& dir) {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
    return n;
}

}  // namespace

TEST_CASE("write_file_atomically replaces the file whole, with its mode, and leaves no temporary file") {
    const TempTree t;
    const std::string file = t.path + "/state.json";
    write_file_atomically(file, "one", 0600, MissingFolder::refuse);
    write_file_atomically(file, "two", 0644, MissingFolder::refuse);
    CHECK(file_text(file) == "two");
    struct stat st {};
    REQUIRE(::stat(file.c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0644);
    CHECK(entries(t.path) == 1);
    // A missing folder: refused, or made (one level) where asked.
    CHECK_THROWS_AS(write_file_atomically(t.path + "/no/x", "x", 0644, MissingFolder::refuse), Error);
    write_file_atomically(t.path + "/made/x", "made", 0644, MissingFolder::make);
    CHECK(file_text(t.path + "/made/x") == "made");
    write_file_atomically(t.path + "/slash//x", "slash", 0644, MissingFolder::make);  // a state folder "slash/"
    CHECK(file_text(t.path + "/slash/x") == "slash");
    // A name relative to the working folder.
    const auto cwd = std::filesystem::current_path();
    std::filesystem::current_path(t.path);
    write_file_atomically("here.txt", "here", 0644, MissingFolder::refuse);
    std::filesystem::current_path(cwd);
    CHECK(file_text(t.path + "/here.txt") == "here");
}

TEST_CASE("as root, write_file_atomically writes through no link another user could have placed") {
    if (::geteuid() != 0) return;  // only root's writes are judged
    const TempTree t;
    const std::string target = t.path + "/rootonly";
    REQUIRE(::mkdir(target.c_str(), 0700) == 0);
    const std::string theirs = t.path + "/theirs";
    REQUIRE(::mkdir(theirs.c_str(), 0755) == 0);
    REQUIRE(::chown(theirs.c_str(), 65534, 65534) == 0);
    REQUIRE(::symlink(target.c_str(), (theirs + "/textfile").c_str()) == 0);
    REQUIRE(::lchown((theirs + "/textfile").c_str(), 65534, 65534) == 0);
    for (const MissingFolder missing : {MissingFolder::refuse, MissingFolder::make}) {
        try {
            write_file_atomically(theirs + "/textfile/doctor.prom", "x", 0644, missing);
            FAIL("written through another user's link");
        } catch (const Error& e) {
            CHECK(e.problem().exit_code == ExitCode::permission);
            CHECK(std::string(e.what()).find(theirs + "/textfile is a link in " + theirs) != std::string::npos);
        }
        // A folder to be made under the link is refused the same way.
        CHECK_THROWS_AS(write_file_atomically(theirs + "/textfile/sub/doctor.prom", "x", 0644, MissingFolder::make),
                        Error);
    }
    // Root's own link in their folder is theirs to rename onto the name that root writes through.
    REQUIRE(::symlink(target.c_str(), (theirs + "/roots").c_str()) == 0);
    CHECK_THROWS_AS(write_file_atomically(theirs + "/roots/doctor.prom", "x", 0644, MissingFolder::refuse), Error);
    CHECK(entries(target) == 0);
    // Their folder itself, with no link: written in (they could write there anyway), the file root's.
    write_file_atomically(theirs + "/doctor.prom", "ok", 0644, MissingFolder::refuse);
    CHECK(file_text(theirs + "/doctor.prom") == "ok");
    // Their name where the file goes is replaced, never written through.
    const std::string victim = target + "/victim";
    std::ofstream(victim) << "root's";
    REQUIRE(::symlink(victim.c_str(), (theirs + "/again.prom").c_str()) == 0);
    write_file_atomically(theirs + "/again.prom", "new", 0644, MissingFolder::refuse);
    CHECK(file_text(victim) == "root's");
    struct stat st {};
    REQUIRE(::lstat((theirs + "/again.prom").c_str(), &st) == 0);
    CHECK(S_ISREG(st.st_mode));
}
