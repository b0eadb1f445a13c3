#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "imex/channel_folder.hpp"

using namespace cumemctl;
using namespace cumemctl::imex;
namespace fs = std::filesystem;

namespace {

// A temporary channel folder, removed at the end of the test.
struct TempChannelFolder {
    fs::path path;
    TempChannelFolder() {
        char tmpl[] = "/tmp/cumemctl-folder-XXXXXX";
        path = mkdtemp(tmpl);
    }
    ~TempChannelFolder() { fs::remove_all(path); }
};

}  // namespace

TEST_CASE("the channel folder's path is one constant, and its name under dev/ comes from it") {
    CHECK(std::string(imex::kImexChannelDir) == "/dev/nvidia-caps-imex-channels");
    CHECK(kImexChannelDirName == "nvidia-caps-imex-channels");
}

TEST_CASE("channel_number reads channelN and nothing else") {
    CHECK(channel_number("channel0") == 0);
    CHECK(channel_number("channel17") == 17);
    CHECK(channel_number("channel") == -1);
    CHECK(channel_number("channel07") == -1);
    CHECK(channel_number("channelx") == -1);
    CHECK(channel_number("other") == -1);
}

TEST_CASE("read_channel_folder reads every entry without following links, sorted by channel") {
    TempChannelFolder dir;
    std::ofstream(dir.path / "channel3") << "";
    fs::create_directory(dir.path / "channel1");
    fs::create_symlink("/dev/null", dir.path / "channel0");
    std::ofstream(dir.path / "README") << "";
    const ChannelFolder f = read_channel_folder(dir.path.string());
    CHECK(f.exists);
    REQUIRE(f.entries.size() == 4);
    CHECK(f.entries[0].name == "README");
    CHECK(f.entries[0].channel == -1);
    CHECK(f.entries[1].name == "channel0");
    CHECK(f.entries[1].type == 'l');  // the link itself, not /dev/null
    CHECK_FALSE(f.entries[1].usable);
    CHECK(f.entries[2].type == 'd');
    CHECK(f.entries[3].type == 'f');
    CHECK(f.entries[3].channel == 3);
}

TEST_CASE("a folder that is missing, or a link to one, reads as not existing") {
    CHECK_FALSE(read_channel_folder("/nonexistent/nvidia-caps-imex-channels").exists);
    TempChannelFolder dir;
    fs::create_directory(dir.path / "real");
    fs::create_directory_symlink(dir.path / "real", dir.path / "link");
    CHECK(read_channel_folder((dir.path / "real").string()).exists);
    CHECK_FALSE(read_channel_folder((dir.path / "link").string()).exists);
}
