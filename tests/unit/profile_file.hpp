// A fake driver profile (tests/fakecuda/profiles' form) written to a temporary file and named by
// FAKECUDA_PROFILE while the object lives, for the unit tests that load the fake NVML through dlopen (it
// reads the profile at nvmlInit_v2); FAKENVML_INJECT and FAKENVML_SELF_USED are cleared on the way in
// and out, and FAKECUDA_PROFILE is given back its old value.
#pragma once

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

namespace testing_profile {

struct ProfileFile {
    std::string path;
    std::string saved;

    explicit ProfileFile(const nlohmann::json& profile) {
        char name[] = "/tmp/cumemctl-profile-XXXXXX";
        const int fd = mkstemp(name);
        REQUIRE(fd >= 0);
        close(fd);
        path = name;
        std::ofstream(path) << profile.dump();
        if (const char* old = std::getenv("FAKECUDA_PROFILE")) saved = old;
        setenv("FAKECUDA_PROFILE", path.c_str(), 1);
        unsetenv("FAKENVML_INJECT");
        unsetenv("FAKENVML_SELF_USED");
    }
    ~ProfileFile() {
        unlink(path.c_str());
        if (saved.empty()) {
            unsetenv("FAKECUDA_PROFILE");
        } else {
            setenv("FAKECUDA_PROFILE", saved.c_str(), 1);
        }
        unsetenv("FAKENVML_INJECT");
        unsetenv("FAKENVML_SELF_USED");
    }
    ProfileFile(const ProfileFile&) = delete;
    ProfileFile& operator=(const ProfileFile&) = delete;
};

}  // namespace testing_profile
