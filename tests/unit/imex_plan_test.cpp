#include <doctest/doctest.h>

#include <sys/sysmacros.h>

#include "imex/channel_plan.hpp"

using namespace cumemctl;
using namespace cumemctl::imex;

namespace {

const NodeSpec kWant{3, 242, 65534, 65534, 0600};

NodeState char_node(unsigned major, unsigned minor, uid_t uid = 65534, gid_t gid = 65534, mode_t mode = 0600) {
    return NodeState{NodeKind::char_device, major, minor, uid, gid, mode};
}

NodeState other(NodeKind kind) {
    return NodeState{kind, 0, 0, 0, 0, 0644};
}

}  // namespace

TEST_CASE("an absent node is created and a right one left alone") {
    CHECK(plan_channel(kWant, NodeState{}, {}).change == Change::create);
    const ChannelPlan same = plan_channel(kWant, char_node(242, 3), {});
    CHECK(same.change == Change::none);
    CHECK(same.detail.empty());
    CHECK(plan_channel(kWant, char_node(242, 3), {false, true}).change == Change::none);
}

TEST_CASE("a wrong owner or mode is fixed when access was asked for, and the detail says what changes") {
    const PlanOptions asked{false, false, true};  // an explicit owner or mode
    ChannelPlan p = plan_channel(kWant, char_node(242, 3, 0, 0, 0600), asked);
    CHECK(p.change == Change::fix);
    CHECK(p.detail == "owner 0:0 -> 65534:65534");
    p = plan_channel(kWant, char_node(242, 3, 65534, 65534, 0666), asked);
    CHECK(p.change == Change::fix);
    CHECK(p.detail == "mode 0666 -> 0600");
    p = plan_channel(kWant, char_node(242, 3, 65534, 0, 0660), asked);
    CHECK(p.detail == "owner 65534:0 -> 65534:65534, mode 0660 -> 0600");
}

TEST_CASE("without access asked for, a change that lets more users open a channel is never made") {
    // The driver's default (root, 0666) against a per-user channel, as --owner or the Slurm prolog make it.
    const NodeSpec by_default{1, 242, 0, 0, 0666};
    const ChannelPlan kept = plan_channel(by_default, char_node(242, 1, 1000, 1000, 0600), {});
    CHECK(kept.change == Change::keep);
    CHECK(kept.detail ==
          "kept owner 1000:1000, mode 0600: with the default (owner 0:0, mode 0666) every user could read and write "
          "it; a forced run, or the channels' owner or the channels' mode, changes it");
    // force, or an explicit owner or mode, asks for it.
    CHECK(plan_channel(by_default, char_node(242, 1, 1000, 1000, 0600), {false, true}).change == Change::fix);
    CHECK(plan_channel(by_default, char_node(242, 1, 1000, 1000, 0600), {false, false, true}).change == Change::fix);
    // Narrower than the default in the mode alone, or in the group.
    CHECK(plan_channel(by_default, char_node(242, 1, 0, 0, 0600), {}).change == Change::keep);
    CHECK(plan_channel(by_default, char_node(242, 1, 0, 0, 0660), {}).change == Change::keep);
    CHECK(plan_channel(by_default, char_node(242, 1, 0, 0, 0644), {}).detail.find("every user could write it") !=
          std::string::npos);
}

TEST_CASE("without access asked for, changes that widen no one's access are made") {
    // Wider than the default is narrowed.
    const NodeSpec private_default{1, 242, 0, 0, 0600};
    ChannelPlan p = plan_channel(private_default, char_node(242, 1, 0, 0, 0666), {});
    CHECK(p.change == Change::fix);
    CHECK(p.detail == "mode 0666 -> 0600");
    // Another owner where every user may read and write anyway: its owner keeps what it had.
    p = plan_channel(NodeSpec{1, 242, 0, 0, 0666}, char_node(242, 1, 1, 2, 0666), {});
    CHECK(p.change == Change::fix);
    CHECK(p.detail == "owner 1:2 -> 0:0");
    // Only read and write count: the execute bits of a device node mean nothing.
    CHECK(plan_channel(NodeSpec{1, 242, 0, 0, 0666}, char_node(242, 1, 0, 0, 0777), {}).change == Change::fix);
    CHECK(plan_channel(NodeSpec{1, 242, 0, 0, 0777}, char_node(242, 1, 0, 0, 0666), {}).change == Change::fix);
}

TEST_CASE("access_concern names who would gain and who would lose") {
    CHECK(access_concern(char_node(242, 1, 0, 0, 0600), NodeSpec{1, 242, 0, 44, 0660}) ==
          "group 44 could read and write it");
    CHECK(access_concern(char_node(242, 1, 0, 0, 0600), NodeSpec{1, 242, 1000, 0, 0400}) == "uid 1000 could read it");
    // Root can open any node: giving it one is no gain.
    CHECK(access_concern(char_node(242, 1, 1000, 1000, 0666), NodeSpec{1, 242, 0, 0, 0666}).empty());
    // Taking a channel from its owner, even to root with the same mode.
    CHECK(access_concern(char_node(242, 1, 1000, 1000, 0600), NodeSpec{1, 242, 0, 0, 0600}) ==
          "uid 1000, its owner, could no longer read and write it");
    CHECK(access_concern(char_node(242, 1, 1000, 1000, 0600), NodeSpec{1, 242, 2000, 2000, 0600}) ==
          "uid 2000 could read and write it, and uid 1000, its owner, could no longer read and write it");
    // A node open to every user is nobody's own: narrowing it takes nothing from its owner alone.
    CHECK(access_concern(char_node(242, 1, 1000, 1000, 0666), NodeSpec{1, 242, 0, 0, 0600}).empty());
    // A change of group with the same mode: the new group's members gain what the old group had.
    CHECK(access_concern(char_node(242, 1, 0, 10, 0660), NodeSpec{1, 242, 0, 20, 0660}) ==
          "group 20 could read and write it");
    CHECK(access_concern(char_node(242, 1, 0, 10, 0660), NodeSpec{1, 242, 0, 10, 0600}).empty());
}

TEST_CASE("a device node of the wrong number or type is refused without force and replaced with it") {
    for (const NodeState& wrong :
         {char_node(242, 4), char_node(243, 3), NodeState{NodeKind::block_device, 242, 3, 65534, 65534, 0600}}) {
        const ChannelPlan refused = plan_channel(kWant, wrong, {});
        CHECK(refused.change == Change::refuse);
        // The detail names the property in the core's words; imex-setup says it as --force.
        CHECK(refused.detail.find("; a forced run replaces it") != std::string::npos);
        CHECK(plan_channel(kWant, wrong, {false, true}).change == Change::replace);
    }
    CHECK(plan_channel(kWant, char_node(242, 4), {}).detail ==
          "character device 242:4, not character device 242:3; a forced run replaces it");
    CHECK(plan_channel(kWant, NodeState{NodeKind::block_device, 242, 3, 0, 0, 0600}, {false, true}).detail ==
          "block device 242:3, not character device 242:3");
}

TEST_CASE("anything but a device node is never touched, not even with force") {
    for (NodeKind kind :
         {NodeKind::regular_file, NodeKind::directory, NodeKind::symlink, NodeKind::fifo, NodeKind::socket}) {
        CAPTURE(node_kind_name(kind));
        for (bool force : {false, true}) {
            for (bool remove : {false, true}) {
                CHECK(plan_channel(kWant, other(kind), {remove, force}).change == Change::refuse);
            }
        }
    }
    CHECK(plan_channel(kWant, other(NodeKind::symlink), {}).detail ==
          "a symbolic link; cumemctl never changes anything but a device node");
}

TEST_CASE("removal removes the right node, refuses a wrong one without force, and is done when absent") {
    const PlanOptions remove{true, false};
    const PlanOptions remove_force{true, true};
    CHECK(plan_channel(kWant, NodeState{}, remove).change == Change::none);
    CHECK(plan_channel(kWant, char_node(242, 3, 0, 0, 0666), remove).change == Change::remove);
    CHECK(plan_channel(kWant, char_node(242, 9), remove).change == Change::refuse);
    CHECK(plan_channel(kWant, char_node(242, 9), remove_force).change == Change::remove);
    CHECK(plan_channel(kWant, other(NodeKind::regular_file), remove).detail ==
          "a regular file; only device nodes are ever removed");
}

TEST_CASE("node states come from stat and have names") {
    struct stat st {};
    st.st_mode = S_IFCHR | 0640;
    st.st_rdev = makedev(242, 7);
    st.st_uid = 5;
    st.st_gid = 6;
    const NodeState s = node_state_from_stat(st);
    CHECK(s.kind == NodeKind::char_device);
    CHECK(s.major == 242);
    CHECK(s.minor == 7);
    CHECK(s.mode == 0640);
    st.st_mode = S_IFLNK | 0777;
    CHECK(node_state_from_stat(st).kind == NodeKind::symlink);
    CHECK(node_kind_key(NodeKind::regular_file) == "file");
    CHECK(channel_name(12) == "channel12");
    CHECK(format_device(242, 12) == "242:12");
    CHECK(change_name(Change::replace) == "replace");
}
