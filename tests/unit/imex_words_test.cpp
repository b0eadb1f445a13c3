// imex-setup's core names properties, never imex-setup's options: the core's words by default, a
// caller's names where it gives them (imex/imex_words on base/property_words).
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "imex/imex_words.hpp"
#include "imex/nvidia_params.hpp"
#include "imex/proc_devices.hpp"

using namespace cumemctl;
using namespace cumemctl::imex;

namespace {

const std::vector<ImexProperty> kEveryImexProperty{
    ImexProperty::proc_devices, ImexProperty::params, ImexProperty::dev_root, ImexProperty::owner,
    ImexProperty::mode,         ImexProperty::force,  ImexProperty::check,    ImexProperty::dry_run};

// A command's names: the placeholder's key as an option ("{dry_run}" -> "--dry_run").
std::string words_test_option(ImexProperty p) {
    const std::string key = imex_placeholder(p);
    return "--" + key.substr(1, key.size() - 2);
}

}  // namespace

TEST_CASE("every imex-setup property has its own placeholder and its own words, none an option") {
    std::set<std::string> placeholders, words;
    for (ImexProperty p : kEveryImexProperty) {
        const std::string key = imex_placeholder(p);
        CAPTURE(key);
        CHECK(key.front() == '{');
        CHECK(key.back() == '}');
        placeholders.insert(key);
        words.insert(imex_property_words(p));
        CHECK(imex_property_words(p).find("--") == std::string::npos);
        CHECK(imex_words(key) == imex_property_words(p));
        CHECK(imex_words(key, words_test_option) == "--" + key.substr(1, key.size() - 2));
    }
    CHECK(placeholders.size() == kEveryImexProperty.size());
    CHECK(words.size() == kEveryImexProperty.size());
}

TEST_CASE("filling keeps everything but a property's placeholder") {
    CHECK(imex_words("without {check} ({dry_run} shows them)") == "without a check-only run (a dry run shows them)");
    CHECK(imex_words("without {check}", words_test_option) == "without --check");
    CHECK(imex_words("{not_a_property} {force} { {") == "{not_a_property} a forced run { {");
    CHECK(imex_words("an unclosed {force") == "an unclosed {force");
    CHECK(imex_words("") == "");
}

TEST_CASE("an ImexError says its texts in the core's words and in a caller's") {
    const ImexError e(Problem{.exit_code = ExitCode::usage,
                              .message = "{dev_root} /x: no such directory",
                              .cause = "{owner} set",
                              .remedy = "point {params} at a copy"});
    CHECK(e.exit_code() == ExitCode::usage);
    CHECK(std::string(e.what()) == "the device root /x: no such directory");
    CHECK(e.problem().cause == "the channels' owner set");
    CHECK(e.problem().remedy == "point the params path at a copy");
    const Problem mine = e.in_words(words_test_option);
    CHECK(mine.exit_code == ExitCode::usage);
    CHECK(mine.message == "--dev_root /x: no such directory");
    CHECK(mine.cause == "--owner set");
    CHECK(mine.remedy == "point --params at a copy");
}

TEST_CASE("a text a caller changed after the throw is kept as the caller wrote it") {
    ImexError e(Problem{.message = "m {force}", .cause = "c", .remedy = "r {check}"});
    e.problem().cause = "a cause added later";
    const Problem mine = e.in_words(words_test_option);
    CHECK(mine.message == "m --force");
    CHECK(mine.cause == "a cause added later");
    CHECK(mine.remedy == "r --check");
}

TEST_CASE("the /proc parsers' remedies name the file's property: doctor reads the core's words") {
    try {
        find_char_major("rubbish\n", kImexChannelsDeviceName, "/proc/devices");
        FAIL("accepted");
    } catch (const ImexError& e) {
        CHECK(e.problem().remedy.rfind("point the devices path at the kernel's /proc/devices", 0) == 0);
        CHECK(e.in_words(words_test_option).remedy.rfind("point --proc_devices at the kernel's /proc/devices", 0) == 0);
    }
    try {
        parse_nvidia_params("rubbish\n", "/proc/driver/nvidia/params");
        FAIL("accepted");
    } catch (const ImexError& e) {
        CHECK(e.problem().remedy.rfind("point the params path at the driver's /proc/driver/nvidia/params", 0) == 0);
        CHECK(e.in_words(words_test_option).remedy.rfind("point --params at", 0) == 0);
    }
}
