#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "fleet/json_cursor.hpp"

using namespace cumemctl::fleet;

namespace {

// What JsonCursor::skip() makes of `text`, as a JsonScan: where the value ends, or where it throws.
JsonScan skipped(const std::string& text, int max_depth) {
    JsonCursor cursor(text, max_depth);
    try {
        cursor.skip();
        return {JsonScan::Result::value, cursor.offset()};
    } catch (const JsonSyntaxError& e) {
        return {JsonScan::Result::syntax, e.offset};
    } catch (const JsonIncomplete&) {
        return {JsonScan::Result::incomplete, 0};
    }
}

void check_alike(const std::string& text, int max_depth) {
    CAPTURE(text);
    const JsonScan want = skipped(text, max_depth);
    const JsonScan got = scan_json_value(text, max_depth);
    CHECK(static_cast<int>(got.result) == static_cast<int>(want.result));
    if (want.result != JsonScan::Result::incomplete) CHECK(got.offset == want.offset);
}

}  // namespace

TEST_CASE("scan_json_value finds what skip() finds, by value: the end, the byte at fault, or the text ending") {
    const std::vector<std::string> texts = {"{x",
                                            "{}",
                                            " {\"a\": 1}",
                                            "[1, 2]",
                                            "[1 2]",
                                            "{\"a\" 1}",
                                            "{\"a\": tru}",
                                            "{\"a\": true",
                                            "{\"a\": 1.}",
                                            "{\"a\": -}",
                                            "{\"a\": 1e}",
                                            "{\"a\": 01}",
                                            "{\"a\": \"\\\"}",
                                            "{\"a\": \"x\\\\\"}",
                                            "x",
                                            "5",
                                            "-0.5e+3 ",
                                            "\"abc",
                                            "null",
                                            "nul",
                                            "nulx",
                                            "{,}",
                                            "[,]",
                                            "{\"a\":1,}",
                                            "[1,]",
                                            "{]",
                                            "[}",
                                            "{\"a\":[{\"b\":{}}]}x",
                                            std::string(70, '[') + std::string(70, ']'),
                                            std::string(63, '[') + std::string(63, ']'),
                                            "",
                                            "   "};
    for (const auto& t : texts) check_alike(t, 64);
    // Random texts of JSON's own characters: every fault, wherever it falls.
    std::mt19937 random(7);
    const std::string alphabet = "{}[]:,\" \\0123456789-.eEtrufalsn x";
    for (int i = 0; i < 20000; ++i) {
        std::string text(random() % 24, ' ');
        for (auto& c : text) c = alphabet[random() % alphabet.size()];
        check_alike(text, static_cast<int>(random() % 4));
    }
}
