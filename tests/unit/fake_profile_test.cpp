// The fakes' profile loader (tests/fakecuda/profile_json.hpp): a profile on a "base", merged by the
// override rule of docs/testing.md, and make_profile.py reading the same files to the same profile.
#include <doctest/doctest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "../fakecuda/profile_json.hpp"

namespace {

namespace fs = std::filesystem;

struct ProfileFolder {
    std::string path;
    ProfileFolder() {
        char name[] = "/tmp/cumemctl-profiles-XXXXXX";
        REQUIRE(mkdtemp(name) != nullptr);
        path = name;
    }
    ~ProfileFolder() { fs::remove_all(path); }
    std::string write(const std::string& name, const std::string& text) const {
        std::ofstream(path + "/" + name) << text;
        return path + "/" + name;
    }
};

const char* const kBase = R"({"driver_version": 13000, "keep": {"x": 1, "y": 2},
    "devices": [{"n": 0, "nvml": {"p": 1}}, {"n": 1, "nvml": {"p": 1}}, {"n": 2}]})";

}  // namespace

TEST_CASE("a profile on a base: members merged, null removes, a list patched by \"*\" and then by index") {
    ProfileFolder f;
    f.write("base.json", kBase);
    f.write("mid.json", R"({"base": "base.json", "keep": {"y": null, "z": 3},
        "devices": {"1": {"n": 9}, "*": {"nvml": {"q": 2}}}})");
    const std::string top = f.write("top.json", R"({"base": "mid.json", "driver_version": [12080]})");
    const nlohmann::json want = nlohmann::json::parse(R"({"driver_version": [12080], "keep": {"x": 1, "z": 3},
        "devices": [{"n": 0, "nvml": {"p": 1, "q": 2}}, {"n": 9, "nvml": {"p": 1, "q": 2}}, {"n": 2, "nvml": {"q": 2}}]})");
    CHECK(fake::read_profile(top) == want);
    // make_profile.py reads it the same way: with no change, it writes the whole profile. The aarch64
    // unit tests run in a Debian 11 root without Python; the amd64 run compares the two loaders.
    if (std::system("command -v python3 >/dev/null 2>&1") != 0) return;
    const std::string script = std::string(FAKECUDA_PROFILES) + "/../make_profile.py";
    const std::string out = f.path + "/out.json";
    REQUIRE(std::system(("python3 " + script + " " + top + " " + out + " keep.x=1").c_str()) == 0);
    CHECK(nlohmann::json::parse(std::ifstream(out)) == want);
}

TEST_CASE("a profile without a base is read as it is written") {
    ProfileFolder f;
    CHECK(fake::read_profile(f.write("p.json", kBase)) == nlohmann::json::parse(kBase));
}

TEST_CASE("an override that names no element, a missing base and a loop of bases are refused") {
    ProfileFolder f;
    f.write("base.json", kBase);
    CHECK_THROWS_WITH_AS(fake::read_profile(f.write("a.json", R"({"base": "base.json", "devices": {"3": {}}})")),
                         doctest::Contains("\"3\" is not \"*\" or the index of one of its 3 elements"),
                         std::runtime_error);
    CHECK_THROWS_AS(fake::read_profile(f.write("b.json", R"({"base": "base.json", "devices": {"01": {}}})")),
                    std::runtime_error);
    CHECK_THROWS_AS(fake::read_profile(f.write("c.json", R"({"base": "base.json", "devices": {"0": null}})")),
                    std::runtime_error);
    CHECK_THROWS_AS(fake::read_profile(f.write("d.json", R"({"base": "gone.json"})")), fake::ProfileMissing);
    CHECK_THROWS_WITH_AS(fake::read_profile(f.write("e.json", R"({"base": "e.json"})")),
                         doctest::Contains("more than 8 bases"), std::runtime_error);
}
