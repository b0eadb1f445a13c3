// A fake profile read from its file, for both fakes (fake_state.cpp, fake_nvml.cpp): a profile may name a
// "base" (a profile file beside it) and give only what differs from it, merged by the override rule of
// docs/testing.md ("Fake profiles"); make_profile.py's load_profile reads a profile the same way.
#pragma once

#include <cstddef>
#include <fstream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace fake {

// The profile's file (or its base's) cannot be opened.
class ProfileMissing : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// How deep "base" may chain (a profile whose base has a base...): a loop of bases ends here.
inline constexpr int kMaxProfileBases = 8;

// `patch` applied to `target` by the override rule: a JSON merge patch (RFC 7386: an object merges member
// by member, null removes a member, anything else replaces), except that an object applied to a list
// patches its elements: "*" every element, then "N" element N (one that exists, never null).
inline void override_profile(nlohmann::json& target, const nlohmann::json& patch, const std::string& where) {
    if (!patch.is_object()) {
        target = patch;
        return;
    }
    if (target.is_array()) {
        if (const auto all = patch.find("*"); all != patch.end()) {
            for (std::size_t i = 0; i < target.size(); ++i)
                override_profile(target[i], *all, where + "[" + std::to_string(i) + "]");
        }
        for (const auto& [key, value] : patch.items()) {
            if (key == "*") continue;
            const bool index = !key.empty() && key.size() < 10 &&
                               key.find_first_not_of("0123456789") == std::string::npos &&
                               (key == "0" || key[0] != '0');
            const std::size_t i = index ? std::stoul(key) : 0;
            if (!index || i >= target.size() || value.is_null())
                throw std::runtime_error(where + ": \"" + key + "\" is not \"*\" or the index of one of its " +
                                         std::to_string(target.size()) + " elements with a value that is not null");
            override_profile(target[i], value, where + "[" + key + "]");
        }
        return;
    }
    if (!target.is_object()) target = nlohmann::json::object();
    for (const auto& [key, value] : patch.items()) {
        if (value.is_null()) {
            target.erase(key);
        } else {
            override_profile(target[key], value, where + "." + key);
        }
    }
}

// The profile in the file `path`, its "base" read first and overridden by the rest. Throws ProfileMissing
// where a file cannot be opened, and nlohmann's or std::runtime_error where one is not a profile.
inline nlohmann::json read_profile(const std::string& path, int depth = 0) {
    std::ifstream in(path);
    if (!in) throw ProfileMissing("cannot read profile " + path);
    nlohmann::json profile = nlohmann::json::parse(in);
    if (!profile.is_object() || !profile.contains("base")) return profile;
    if (depth >= kMaxProfileBases)
        throw std::runtime_error(path + ": more than " + std::to_string(kMaxProfileBases) + " bases, one on another");
    const std::string base = profile["base"].get<std::string>();
    profile.erase("base");
    const std::size_t slash = path.rfind('/');  // a base is beside the file that names it, or a full path
    const bool beside = !base.empty() && base[0] != '/' && slash != std::string::npos;
    nlohmann::json merged = read_profile(beside ? path.substr(0, slash + 1) + base : base, depth + 1);
    override_profile(merged, profile, "profile");
    return merged;
}

}  // namespace fake
