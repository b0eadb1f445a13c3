// "Did you mean": the known name closest to a mistyped one (a command, an option, a check).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cumemctl {

// The name among `names` that `word` most likely meant: the fewest edits (insert, delete, substitute,
// swap two neighbours), none for one letter (but its case), at most one for a short word and a third of
// its length for a longer one, or the
// one name that `word` begins (three characters at least). nullopt when none is close, or `word` is one.
std::optional<std::string> closest_name(std::string_view word, const std::vector<std::string>& names);

// "; did you mean 'doctor'?" for closest_name's answer, else "".
std::string did_you_mean(std::string_view word, const std::vector<std::string>& names);

}  // namespace cumemctl
