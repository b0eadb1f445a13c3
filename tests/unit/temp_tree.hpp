// A temporary folder for the tests of what root opens and writes (trusted_file, atomic_file): root's
// and 0755 where root runs the tests, removed with what is in it. Defined once: the tests compile in
// unity batches.
#pragma once

#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace testing_tree {

struct TempTree {
    std::string path;
    TempTree() {
        char name[] = "/tmp/cumemctl-tree-XXXXXX";
        REQUIRE(::mkdtemp(name) != nullptr);
        path = name;
        REQUIRE(::chmod(name, 0755) == 0);
    }
    TempTree(const TempTree&) = delete;
    TempTree& operator=(const TempTree&) = delete;
    ~TempTree() { std::filesystem::remove_all(path); }
    // Makes NAME in it, a folder or a file holding `text`, with `mode`; returns its path.
    std::string make(const std::string& name, mode_t mode, bool folder, const std::string& text = "x") const {
        std::string p = path + "/" + name;
        if (folder) {
            REQUIRE(::mkdir(p.c_str(), 0700) == 0);
        } else {
            std::ofstream(p) << text;
        }
        REQUIRE(::chmod(p.c_str(), mode) == 0);
        return p;
    }
};

}  // namespace testing_tree
