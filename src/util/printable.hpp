// Text that cumemctl did not write (a report's host or reason, a process name, a driver's or NVML's
// string) made safe to show: on a terminal, in one line, and in JSON.
#pragma once

#include <string>
#include <string_view>

namespace cumemctl {

// The text with what a terminal would act on, or what hides what follows, written out visibly: C0 and
// C1 control characters and DEL as "\x1b" (the escape that clears a screen or sets a title), Unicode's
// direction overrides and isolates as "\u202e", and each byte that is not UTF-8 as "\xff". Everything
// else, UTF-8 beyond ASCII included, stays as it is; text without such characters comes back unchanged.
std::string printable(std::string_view text);

// The text as XML 1.0 and HTML may hold it, whatever bytes it holds: as printable writes it, except that
// tab and newline stay as they are (a reason's lines; a carriage return is written out), and that the characters
// XML 1.0 forbids beyond those (U+FFFE, U+FFFF) are written out too ("\uffff"). Every code point left is one of
// XML 1.0's Char production; a lone surrogate or a byte that is not UTF-8 is written out ("\xed").
std::string printable_lines(std::string_view text);

// The text as valid UTF-8: each byte that is not part of a well-formed sequence becomes U+FFFD.
std::string valid_utf8(std::string_view text);

}  // namespace cumemctl
