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

TEST_CASE("a wrong owner or mode is fixed and the detail says what changes") {
    ChannelPlan p = plan_channel(kWant, char_node(242, 3, 0, 0, 0600), {});
    CHECK(p.change == Change::fix);
    CHECK(p.detail == "owner 0:0 -> 65534:65534");
    p = plan_channel(kWant, char_node(242, 3, 65534, 65534, 0666), {});
    CHECK(p.change == Change::fix);
    CHECK(p.detail == "mode 0666 -> 0600");
    p = plan_channel(kWant, char_node(242, 3, 65534, 0, 0660), {});
    CHECK(p.detail == "owner 65534:0 -> 65534:65534, mode 0660 -> 0600");
}

TEST_CASE("a device node of the wrong number or type is refused without force and replaced with it") {
    for (const NodeState& wrong :
         {char_node(242, 4), char_node(243, 3), NodeState{NodeKind::block_device, 242, 3, 65534, 65534, 0600}}) {
        const ChannelPlan refused = plan_channel(kWant, wrong, {});
        CHECK(refused.change == Change::refuse);
        // The detail names the property; imex-setup says it as --force.
        CHECK(refused.detail.find("; {force} replaces it") != std::string::npos);
        CHECK(plan_channel(kWant, wrong, {false, true}).change == Change::replace);
    }
    CHECK(plan_channel(kWant, char_node(242, 4), {}).detail ==
          "character device 242:4, not character device 242:3; {force} replaces it");
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
