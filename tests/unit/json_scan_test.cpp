#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "util/json_cursor.hpp"

using namespace cumemctl;

namespace {

// What JsonCursor::skip() makes of `text`, as a JsonScan: where the value ends, or where it throws, with
// the words it throws.
JsonScan skipped(const std::string& text, int max_depth, std::string& words) {
    JsonCursor cursor(text, max_depth);
    try {
        cursor.skip();
        return {JsonScan::Result::value, cursor.offset()};
    } catch (const JsonSyntaxError& e) {
        words = e.what();
        return {JsonScan::Result::syntax, e.offset};
    } catch (const JsonIncomplete&) {
        return {JsonScan::Result::incomplete, 0};
    }
}

void check_alike(const std::string& text, int max_depth) {
    CAPTURE(text);
    std::string words;
    const JsonScan want = skipped(text, max_depth, words);
    const JsonScan got = scan_json_value(text, max_depth);
    CHECK(static_cast<int>(got.result) == static_cast<int>(want.result));
    if (want.result != JsonScan::Result::incomplete) CHECK(got.offset == want.offset);
    if (want.result == JsonScan::Result::syntax) CHECK(words == json_fault_words(got.fault));
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

TEST_CASE("scan_json_value names each fault where it is, in the words JsonCursor throws") {
    struct Want {
        std::string text;
        std::size_t offset;
        JsonFault fault;
        const char* words;
    };
    const std::vector<Want> wants = {
        {"[1 2]", 3, JsonFault::comma_missing, "a ',' is missing between members"},
        {"{\"a\" 1}", 5, JsonFault::colon_missing, "a ':' is missing after a key"},
        {"{1: 2}", 1, JsonFault::key_not_text, "a key is not text"},
        {"[nul]", 4, JsonFault::unknown_word, "an unknown word"},
        {"[-x]", 2, JsonFault::number_without_digits, "a number without digits"},
        {" ?", 1, JsonFault::unexpected_character, "an unexpected character"},
        {"[[[]]]", 2, JsonFault::nested_too_deep, "values nested too deep"},
    };
    for (const auto& w : wants) {
        CAPTURE(w.text);
        const JsonScan got = scan_json_value(w.text, 2);
        CHECK(static_cast<int>(got.result) == static_cast<int>(JsonScan::Result::syntax));
        CHECK(got.offset == w.offset);
        CHECK(static_cast<int>(got.fault) == static_cast<int>(w.fault));
        CHECK(std::string(json_fault_words(got.fault)) == w.words);
    }
}
