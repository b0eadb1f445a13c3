#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "doctor/imex_survey.hpp"

using namespace cumemctl::doctor;
using cumemctl::imex::ChannelEntry;
namespace fs = std::filesystem;

namespace {

// A temporary system root, removed at the end of the test.
struct SurveyRoot {
    fs::path path;
    SurveyRoot() {
        char tmpl[] = "/tmp/cumemctl-unit-XXXXXX";
        path = mkdtemp(tmpl);
    }
    ~SurveyRoot() { fs::remove_all(path); }
    void write(const std::string& relative, const std::string& text) const {
        fs::create_directories((path / relative.substr(1)).parent_path());
        std::ofstream(path / relative.substr(1)) << text;
    }
};

}  // namespace

TEST_CASE("the survey reads the major, the driver parameters and the channel folder") {
    SurveyRoot root;
    root.write("/proc/devices",
               "Character devices:\n  1 mem\n511 nvidia-caps-imex-channels\n\nBlock devices:\n"
               "512 nvidia-caps-imex-channels\n");
    root.write("/proc/driver/nvidia/params", "ImexChannelCount: 2048\nCreateImexChannel0: 1\n");
    root.write("/dev/nvidia-caps-imex-channels/channel7", "");
    root.write("/dev/nvidia-caps-imex-channels/README", "");
    root.write("/dev/nvidia-caps-imex-channels/channel007", "");
    const ChannelSurvey s = survey_channels(root.path.string());
    CHECK(s.proc_devices_read);
    CHECK(s.major == 511u);
    CHECK(s.channel_count == 2048);
    CHECK(s.create_channel0 == 1);
    CHECK(s.dir_exists);
    REQUIRE(s.nodes.size() == 3);
    // Names that are not channelN sort first (channel -1) and are not channel problems.
    CHECK(s.nodes[0].channel == -1);
    CHECK(channel_node_problem(s.nodes[0], s).empty());
    CHECK(s.nodes[2].name == "channel7");
    CHECK(s.nodes[2].channel == 7);
    CHECK(s.nodes[2].type == 'f');
    CHECK(channel_node_problem(s.nodes[2], s) == "channel7 is not a character device (type 'f')");
    const auto j = to_json(s);
    CHECK(j["major"] == 511);
    CHECK(j["nodes"][2]["problem"] == "channel7 is not a character device (type 'f')");
}

TEST_CASE("a missing system root says what it could not read") {
    const ChannelSurvey s = survey_channels("/nonexistent-root");
    CHECK_FALSE(s.proc_devices_read);
    CHECK_FALSE(s.major.has_value());
    CHECK_FALSE(s.dir_exists);
    CHECK(s.nodes.empty());
}

TEST_CASE("channel nodes: wrong major, wrong minor, beyond the channel count") {
    ChannelSurvey s;
    s.major = 511;
    s.channel_count = 4;
    ChannelEntry n{"channel2", 2, 'c', 511, 2, 0, 0, 0600, true};
    CHECK(channel_node_problem(n, s).empty());
    n.major = 195;
    CHECK(channel_node_problem(n, s) == "channel2 has device number 195:2, not the IMEX channel major 511");
    n.major = 511;
    n.minor = 3;
    CHECK(channel_node_problem(n, s) == "channel2 has minor 3, not 2");
    n = ChannelEntry{"channel9", 9, 'c', 511, 9, 0, 0, 0600, true};
    CHECK(channel_node_problem(n, s) == "channel9 is beyond the driver's ImexChannelCount (4)");
    CHECK(octal_mode(0666) == "0666");
    CHECK(octal_mode(0100600) == "0600");
}

TEST_CASE("multi-user: login accounts in /etc/passwd, or a directory service") {
    SurveyRoot root;
    root.write("/etc/passwd",
               "root:x:0:0::/root:/bin/bash\nsvc:x:1001:1001::/:/usr/sbin/nologin\n"
               "nobody:x:65534:65534::/:/bin/sh\nalice:x:1000:1000::/home/alice:/bin/bash\n");
    root.write("/etc/nsswitch.conf", "passwd: files systemd\n");
    UserSurvey u = survey_users(root.path.string());
    CHECK_FALSE(u.multi_user);
    CHECK(u.why == "one login account (alice)");
    root.write("/etc/passwd", "alice:x:1000:1000::/home/alice:/bin/bash\nbob:x:1001:1001::/home/bob:/bin/zsh\n");
    u = survey_users(root.path.string());
    CHECK(u.multi_user);
    CHECK(u.why == "2 login accounts (alice, bob)");
    root.write("/etc/passwd", "root:x:0:0::/root:/bin/bash\n");
    root.write("/etc/nsswitch.conf", "passwd:         files sss\n");
    u = survey_users(root.path.string());
    CHECK(u.multi_user);
    CHECK(u.why == "accounts from a directory service (sss in /etc/nsswitch.conf)");
    CHECK(survey_users("/nonexistent-root").multi_user);
}

TEST_CASE("the channel folder's own mount, from /proc/self/mountinfo") {
    const std::string mountinfo =
        "22 1 0:21 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
        "25 22 0:5 / /dev rw,nosuid shared:2 - devtmpfs udev rw,size=100k\n"
        "31 25 0:30 / /dev/nvidia-caps-imex-channels-old rw - tmpfs tmpfs rw\n"
        "40 25 0:33 / /dev/nvidia-caps-imex-channels rw,nosuid master:7 - tmpfs tmpfs rw,mode=755\n";
    CHECK(mount_type_at(mountinfo, "/dev/nvidia-caps-imex-channels") == "tmpfs");
    CHECK(mount_type_at(mountinfo, "/dev") == "devtmpfs");
    CHECK(mount_type_at(mountinfo, "/dev/nvidia-caps") == "");
    CHECK(mount_type_at("", "/dev") == "");
    CHECK(mount_type_at("garbage\n1 2\n", "/dev") == "");
    // A later mount at the same place hides the earlier one.
    CHECK(mount_type_at(mountinfo + "41 40 0:34 / /dev/nvidia-caps-imex-channels rw - overlay o rw\n",
                        "/dev/nvidia-caps-imex-channels") == "overlay");
}

TEST_CASE("a folder private to a job step: a tmpfs of its own holding one channel node") {
    SurveyRoot root;
    root.write("/proc/self/mountinfo",
               "22 1 0:21 / / rw - ext4 /dev/sda1 rw\n"
               "40 22 0:33 / /dev/nvidia-caps-imex-channels rw - tmpfs tmpfs rw\n");
    root.write("/dev/nvidia-caps-imex-channels/channel5", "");
    ChannelSurvey s = survey_channels(root.path.string());
    CHECK(s.dir_mount_type == "tmpfs");
    CHECK(private_step_folder(s));
    CHECK(to_json(s)["private_to_step"] == true);
    CHECK(to_json(s)["directory_mount"] == "tmpfs");
    // Two channels: not what Slurm makes.
    root.write("/dev/nvidia-caps-imex-channels/channel6", "");
    CHECK_FALSE(private_step_folder(survey_channels(root.path.string())));
    // No mount of its own (the host's /dev): not private.
    fs::remove(root.path / "dev/nvidia-caps-imex-channels/channel6");
    root.write("/proc/self/mountinfo", "22 1 0:21 / / rw - ext4 /dev/sda1 rw\n");
    s = survey_channels(root.path.string());
    CHECK(s.dir_mount_type.empty());
    CHECK_FALSE(private_step_folder(s));
    CHECK(to_json(s)["directory_mount"].is_null());
}
