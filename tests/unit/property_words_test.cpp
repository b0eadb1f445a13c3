// The placeholders every core's texts use for the properties of a request (base/property_words).
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <string_view>

#include "base/property_words.hpp"

using namespace cumemctl;

namespace {

enum class Colour { red, blue };

constexpr PropertyWords<Colour> kColours[] = {{Colour::red, "red", "the red one"}, {Colour::blue, "blue", "blue"}};

std::string colour_option(Colour c) {
    return c == Colour::red ? "--red" : "--blue";
}

}  // namespace

TEST_CASE("fill_placeholders replaces the keys it is given names for and keeps any other text") {
    const PlaceholderNames names = [](std::string_view key) -> std::optional<std::string> {
        if (key == "a") return "ALPHA";
        return std::nullopt;
    };
    CHECK(fill_placeholders("{a} and {a}", names) == "ALPHA and ALPHA");
    CHECK(fill_placeholders("{b} {a}", names) == "{b} ALPHA");
    CHECK(fill_placeholders("open {a", names) == "open {a");
    CHECK(fill_placeholders("} {} {", names) == "} {} {");
    CHECK(fill_placeholders("", names) == "");
}

TEST_CASE("a literal comes back from filling as it was, placeholders and braces included") {
    const PlaceholderNames names = [](std::string_view key) -> std::optional<std::string> {
        if (key == "force") return "--force";
        return std::nullopt;
    };
    CHECK(literal("/tmp/{force}") == "/tmp/{{force}");
    for (const std::string text : {"/tmp/{force}", "{{force}}", "{", "{{", "a{b", "}{force", "{force", "", "plain"}) {
        CAPTURE(text);
        CHECK(fill_placeholders(literal(text), names) == text);
        CHECK(fill_placeholders("{force} " + literal(text) + " {force}", names) == "--force " + text + " --force");
    }
    // A brace that literal wrote stays one brace, beside a placeholder too.
    CHECK(fill_placeholders("{{{force}", names) == "{--force");
}

TEST_CASE("a table names each property by its key, in the core's words or a caller's") {
    CHECK(property_entry(kColours, Colour::blue).key == "blue");
    CHECK(property_entry(kColours, Colour::red).words == "the red one");
    const auto words = [](Colour c) { return std::string(property_entry(kColours, c).words); };
    CHECK(fill_properties("use {red}, not {blue} or {green}", kColours, words) ==
          "use the red one, not blue or {green}");
    CHECK(fill_properties("use {red}", kColours, colour_option) == "use --red");
}
