#include <doctest/doctest.h>

#include "util/printable.hpp"

using cumemctl::printable;
using cumemctl::valid_utf8;

TEST_CASE("text another program wrote shows what a terminal would act on, and nothing else changes") {
    CHECK(printable("gpu005: row remap failed") == "gpu005: row remap failed");
    CHECK(printable("NVIDIA H200 – 141 GB, µs") == "NVIDIA H200 – 141 GB, µs");  // UTF-8 stays
    // Clear the screen, set the title, return to the line's start, erase it.
    CHECK(printable("\x1b[2J\x1b]0;owned\x07") == "\\x1b[2J\\x1b]0;owned\\x07");
    CHECK(printable("ok\rFAIL\x1b[K") == "ok\\x0dFAIL\\x1b[K");
    CHECK(printable("a\nb\tc\x7f") == "a\\x0ab\\x09c\\x7f");
    CHECK(printable("\xc2\x9b"
                    "31m") == "\\x9b31m");  // C1's CSI, as UTF-8
    CHECK(printable("pass \xe2\x80\xae"
                    "liaf") == "pass \\u202eliaf");                                    // right-to-left override
    CHECK(printable("bad \xff\xfe end \xc0\xaf") == "bad \\xff\\xfe end \\xc0\\xaf");  // not UTF-8, overlong
    CHECK(printable("cut \xe2\x80") == "cut \\xe2\\x80");
    CHECK(printable(std::string("nul\0here", 8)) == "nul\\x00here");
}

TEST_CASE("valid_utf8 replaces each byte that is not UTF-8") {
    CHECK(valid_utf8("µs – fine") == "µs – fine");
    CHECK(valid_utf8("a\xff"
                     "b") ==
          "a\xef\xbf\xbd"
          "b");
    CHECK(valid_utf8("\xed\xa0\x80") == "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");  // a surrogate, three bytes
    CHECK(valid_utf8("\x1b[2J") == "\x1b[2J");  // valid, if unwise: printable is for terminals
}
