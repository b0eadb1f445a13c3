// base/enum_words.hpp: one table gives a value's word and a word's value; a value the table lacks reads
// as the fallback, and a word it does not know parses to nothing.
#include "base/enum_words.hpp"

#include <doctest/doctest.h>

#include <initializer_list>
#include <set>
#include <string>

#include "base/error.hpp"
#include "base/verdict.hpp"
#include "cuda/driver.hpp"
#include "fleet/node_status.hpp"
#include "gpu/bandwidth/copy_bandwidth.hpp"
#include "gpu/device/memory_props.hpp"
#include "imex/channel_apply.hpp"
#include "imex/channel_node.hpp"
#include "imex/channel_plan.hpp"
#include "imex/imex_service.hpp"
#include "imex/imex_setup.hpp"
#include "nvml/fabric_info.hpp"

namespace {

enum class Colour { red, green, blue };
constexpr auto kColours = cumemctl::enum_words<Colour>({{Colour::red, "red"}, {Colour::green, "green"}}, "?");

// Checked at compile time: the table is constexpr.
static_assert(kColours.word(Colour::green) == "green");
static_assert(kColours.parse("red") == Colour::red);

}  // namespace

TEST_CASE("enum_words: both directions, the fallback, the words listed") {
    CHECK(kColours.word(Colour::red) == "red");
    CHECK(kColours.word(Colour::blue) == "?");
    CHECK(kColours.parse("green") == Colour::green);
    CHECK_FALSE(kColours.parse("blue").has_value());
    CHECK_FALSE(kColours.parse("").has_value());
    CHECK(kColours.listed() == "red, green");
    CHECK(kColours.listed(" | ") == "red | green");
    CHECK(kColours.find(Colour::green) == "green");
    CHECK_FALSE(kColours.find(Colour::blue).has_value());
}

TEST_CASE("enum_words: the tables that use it read back every word they write") {
    using namespace cumemctl;
    for (const CheckStatus s : statuses_worst_first()) CHECK(parse_status(status_name(s)) == s);
    for (const ExitCode c : {ExitCode::ok, ExitCode::failed, ExitCode::usage, ExitCode::unavailable,
                             ExitCode::permission, ExitCode::interrupted, ExitCode::terminated}) {
        CHECK(exit_code_from_number(static_cast<long long>(c)) == c);
        CHECK(parse_problem_kind(exit_code_name(c), c) == ProblemKind::by_exit_code);
    }
    CHECK(exit_code_name(static_cast<ExitCode>(77)) == "failed");
    CHECK(status_name(static_cast<CheckStatus>(77)) == "fail");
    CHECK(parse_problem_kind("busy", ExitCode::unavailable) == ProblemKind::busy);
    CHECK(parse_problem_kind("input", ExitCode::usage) == ProblemKind::input);
    CHECK_FALSE(parse_problem_kind("nonsense", ExitCode::failed).has_value());
}

namespace {

// Every value's word, distinct from the others', so that a word reads back as the one value that wrote it.
template <class Enum, class Name>
std::set<std::string> distinct_words(std::initializer_list<Enum> values, Name name) {
    std::set<std::string> words;
    for (const Enum v : values) words.insert(std::string(name(v)));
    CHECK(words.size() == values.size());
    return words;
}

}  // namespace

TEST_CASE("enum_words: imex, fleet, bandwidth and driver words, each value its own") {
    using namespace cumemctl;
    using imex::NodeKind;
    const auto kinds = {NodeKind::missing,   NodeKind::char_device, NodeKind::block_device, NodeKind::regular_file,
                        NodeKind::directory, NodeKind::symlink,     NodeKind::fifo,         NodeKind::socket};
    CHECK(distinct_words(kinds, imex::node_kind_name).count("character device") == 1);
    CHECK(distinct_words(kinds, imex::node_kind_key).count("char") == 1);
    CHECK(imex::node_kind_key(static_cast<NodeKind>(77)) == "unknown");
    using imex::Action;
    CHECK(distinct_words({Action::created, Action::unchanged, Action::kept, Action::fixed, Action::replaced,
                          Action::removed, Action::planned, Action::refused, Action::error},
                         imex::action_name)
              .count("unchanged") == 1);
    using imex::Change;
    CHECK(distinct_words({Change::none, Change::create, Change::fix, Change::keep, Change::replace, Change::remove,
                          Change::refuse},
                         imex::change_name)
              .count("refuse") == 1);
    using imex::UnitState;
    CHECK(distinct_words({UnitState::not_found, UnitState::masked, UnitState::loaded}, imex::unit_state_name)
              .count("not-found") == 1);
    using imex::ModeSource;
    CHECK(
        distinct_words({ModeSource::mode, ModeSource::owner, ModeSource::device_file_mode, ModeSource::driver_default},
                       imex::mode_source_name)
            .count("DeviceFileMode") == 1);
    using gpu::CopyPath;
    CHECK(distinct_words({CopyPath::host_to_device, CopyPath::device_to_host, CopyPath::both,
                          CopyPath::device_to_device, CopyPath::peer},
                         gpu::path_name)
              .count("d2d") == 1);
    for (const CopyPath p : {CopyPath::host_to_device, CopyPath::both, CopyPath::device_to_device}) {
        CHECK(std::string(gpu::count_name(gpu::byte_count(p))) != "?");
    }
    // fleet's statuses: its own words, and doctor's that read back through doctor's parser.
    using fleet::NodeStatus;
    std::set<std::string> statuses;
    for (const NodeStatus s : fleet::node_statuses_worst_first())
        statuses.insert(std::string(fleet::node_status_name(s)));
    CHECK(statuses.size() == fleet::kNodeStatusCount);
    for (const NodeStatus s :
         {NodeStatus::pass, NodeStatus::warn, NodeStatus::busy, NodeStatus::timeout, NodeStatus::fail}) {
        CHECK(fleet::parse_node_status(fleet::node_status_name(s)) == s);
    }
    CHECK(fleet::node_status_name(NodeStatus::stale) == "stale");
    // Numbered values: a known one reads as its word, one newer than the table as its number.
    CHECK(distinct_words<unsigned char>({nvml::kFabricStateNotSupported, nvml::kFabricStateNotStarted,
                                         nvml::kFabricStateInProgress, nvml::kFabricStateCompleted},
                                        nvml::fabric_state_name)
              .count("in-progress") == 1);
    CHECK(nvml::fabric_state_name(9) == "unknown (9)");
    CHECK(distinct_words({CU_GET_PROC_ADDRESS_SUCCESS, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND,
                          CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT, kProcStatusUnset},
                         proc_status_name)
              .count("unset") == 1);
    CUmemLocation loc{};
    loc.type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
    loc.id = 2;
    CHECK(gpu::location_name(loc) == "host-numa:2");
    loc.type = CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT;
    CHECK(gpu::location_name(loc) == "host-numa-current");
    loc.type = CU_MEM_LOCATION_TYPE_DEVICE;
    CHECK(gpu::location_name(loc) == "device");
    for (const char* text : {"device", "host", "host-numa", "host-numa:3"}) {
        CHECK(gpu::location_spec_name(gpu::parse_location(text)) == text);
    }
}
