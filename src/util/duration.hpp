// Times as every table writes them: one format across commands, three significant digits in the unit
// that fits (5.2 us, 0.41 ms, 12.3 ms, 1.02 s), so that a fast step and a slow check read alike.
#pragma once

#include <string>

namespace cumemctl {

// "5.2 us", "412 ms", "1.02 s", "1234 s"; "0 s" for zero or less.
std::string format_duration(double seconds);

// An age as a person says it, in the largest unit that leaves at least 2 of it: "45 s", "12 min", "5 h",
// "7 days", "395 days"; one decimal under 10 ("1.5 h", "7.9 days"). Rounded down, so that an age is never
// said to be more than it is. "0 s" for zero or less.
std::string format_age(double seconds);

}  // namespace cumemctl
