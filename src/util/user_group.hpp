// Users and groups as people name them ("nobody", "1000:video") and as the kernel numbers them.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

namespace cumemctl {

// An owner: user and group ids, with their names where the system knows them (else empty).
struct Owner {
    uid_t uid = 0;
    gid_t gid = 0;
    std::string user;
    std::string group;
};

// Resolves "USER[:GROUP]": each a name or a number, as chown(1) takes them (a name first, then a
// number). Without GROUP the group is the user's primary group. Throws Error (usage) for an unknown
// name, a malformed spec, or a numeric user without a passwd entry and no group; the message names the
// spec as `option` (where it came from: "--owner", "--user", "SLURM_JOB_USER").
Owner resolve_owner(std::string_view spec, std::string_view option);

// The owner for ids, with the names looked up.
Owner owner_of(uid_t uid, gid_t gid);

// "user:group" for people: names where known, numbers otherwise.
std::string format_owner(const Owner& owner);

}  // namespace cumemctl
