#include <doctest/doctest.h>

#include <fmt/format.h>

#include "base/error.hpp"
#include "util/hostlist.hpp"

using namespace cumemctl;

TEST_CASE("host lists are compressed as Slurm writes them") {
    CHECK(compress_hostlist({"gpu003", "gpu001", "gpu002", "gpu007"}) == "gpu[001-003,007]");
    CHECK(compress_hostlist({"gpu001"}) == "gpu001");
    CHECK(compress_hostlist({}).empty());
    // Duplicates count once; names without a number stand alone, in order.
    CHECK(compress_hostlist({"login", "gpu1", "gpu1", "gpu2"}) == "gpu[1-2],login");
    // Numbers of other widths, or other prefixes, are other groups.
    CHECK(compress_hostlist({"n9", "n10", "n11", "m1"}) == "m1,n[10-11],n9");
    CHECK(compress_hostlist({"rack1-node01", "rack1-node02", "rack2-node01"}) == "rack1-node[01-02],rack2-node01");
    // No range holds more hosts than Slurm reads in one (65,536): a longer run is split.
    std::vector<std::string> many;
    for (int i = 0; i < 100000; ++i) many.push_back(fmt::format("x{:05}", i));
    CHECK(compress_hostlist(many) == "x[00000-65535,65536-99999]");
    many.resize(65536);
    CHECK(compress_hostlist(many) == "x[00000-65535]");
    // A run of digits too long for a number is a name.
    CHECK(compress_hostlist({"x1234567890123456789"}) == "x1234567890123456789");
    // The same groups one by one, for a caller that joins them otherwise (fleet's checks per GPU).
    CHECK(compress_hostlist_items({"vmm@gpu3", "fabric-alloc@gpu1", "fabric-alloc@gpu0", "imex-channels"}) ==
          std::vector<std::string>{"fabric-alloc@gpu[0-1]", "imex-channels", "vmm@gpu3"});
}

TEST_CASE("expand_hostlist: Slurm's host lists, and compress_hostlist undoes it") {
    using V = std::vector<std::string>;
    CHECK(expand_hostlist("gpu[001-003,007],login1", "--expect") ==
          V{"gpu001", "gpu002", "gpu003", "gpu007", "login1"});
    CHECK(expand_hostlist("n[1-2]-ib[0-1]", "--expect") == V{"n1-ib0", "n1-ib1", "n2-ib0", "n2-ib1"});
    CHECK(expand_hostlist("solo", "--expect") == V{"solo"});
    CHECK(compress_hostlist(expand_hostlist("gpu[001-300]", "--expect")) == "gpu[001-300]");
    // A million names at most: a range counts both its ends, and a list of names counts as ranges do.
    CHECK(expand_hostlist("n[0-999999]", "--expect").size() == 1000000);
    CHECK_THROWS_AS(expand_hostlist("n[0-1000000]", "--expect"), Error);
    CHECK_THROWS_AS(expand_hostlist("n[1-999999],a,b", "--expect"), Error);
    CHECK(expand_hostlist("n[1-999999],a", "--expect").size() == 1000000);
    for (const char* bad : {"gpu[1-", "gpu]1", "gpu[3-1]", "gpu[a]", "a,,b", "gpu[0-9999999]", "ALL", "n1,all", "a b",
                            "a=b", "-x", "Default"}) {
        CAPTURE(bad);
        try {
            expand_hostlist(bad, "--expect");
            FAIL("accepted");
        } catch (const Error& e) {
            CHECK(e.exit_code() == ExitCode::usage);
            CHECK(std::string(e.what()).find("--expect") != std::string::npos);
        }
    }
}

TEST_CASE("is_single_host: one host by Slurm's grammar, never a word Slurm reads as many nodes") {
    for (const char* good : {"gpu005", "node-7.cluster_a", "n1", "7up", "alla", "all1", "ALLx"}) {
        CAPTURE(good);
        CHECK(is_single_host(good));
    }
    for (const char* bad :
         {"ALL", "all",         "All",    "aLl",  "DEFAULT", "default", "node[1-3]", "a,b",          "-x",  "a b",
          "a=b", "nodename=n1", "n1\tn2", "n1\n", "",        ".n1",     "_n",        "gpu[001-512]", "n1]", "n^1"}) {
        CAPTURE(bad);
        CHECK_FALSE(is_single_host(bad));
        CHECK_FALSE(not_single_host(bad).empty());
    }
    CHECK(not_single_host("all") == "'ALL' is Slurm's word for every node");
    CHECK_FALSE(is_single_host(std::string(256, 'a')));
    CHECK(is_single_host(std::string(255, 'a')));
}
