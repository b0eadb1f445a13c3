#include "util/printable.hpp"

#include <cstdint>

#include <fmt/format.h>

namespace cumemctl {
namespace {

// The length of the well-formed UTF-8 sequence at `i` (RFC 3629: no overlong forms, no surrogates,
// nothing past U+10FFFF) and its code point, or 0 where the byte starts none.
std::size_t sequence_at(std::string_view s, std::size_t i, char32_t& code) {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char b0 = byte(i);
    if (b0 < 0x80) {
        code = b0;
        return 1;
    }
    std::size_t n = 0;
    unsigned char low = 0x80, high = 0xBF;  // the second byte's range
    if (b0 >= 0xC2 && b0 <= 0xDF) {
        n = 2;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
        n = 3;
        if (b0 == 0xE0) low = 0xA0;
        if (b0 == 0xED) high = 0x9F;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
        n = 4;
        if (b0 == 0xF0) low = 0x90;
        if (b0 == 0xF4) high = 0x8F;
    } else {
        return 0;
    }
    if (i + n > s.size() || byte(i + 1) < low || byte(i + 1) > high) return 0;
    code = b0 & (0x7F >> n);
    for (std::size_t k = 1; k < n; ++k) {
        if (k > 1 && (byte(i + k) & 0xC0) != 0x80) return 0;
        code = (code << 6) | (byte(i + k) & 0x3F);
    }
    return n;
}

// Whether a terminal acts on the code point, or it reorders or hides the text around it.
bool acts_on_terminal(char32_t c) {
    return c < 0x20 || (c >= 0x7F && c <= 0x9F) || (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069) ||
           c == 0x200E || c == 0x200F || c == 0x061C;
}

// The text rewritten one UTF-8 sequence at a time: `each(out, code, bytes)` for a well-formed sequence,
// `bad(out, byte)` for a byte that starts none.
template <class Each, class Bad>
std::string rewrite(std::string_view text, Each each, Bad bad) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        char32_t code = 0;
        const std::size_t n = sequence_at(text, i, code);
        if (n == 0) {
            bad(out, static_cast<unsigned char>(text[i]));
            ++i;
        } else {
            each(out, code, text.substr(i, n));
            i += n;
        }
    }
    return out;
}

// The text with each code point for which `written_out(code)` holds written as "\x1b" or "\uffff", and
// each byte that starts no UTF-8 sequence as "\xff".
template <class Pred>
std::string written_out(std::string_view text, Pred shown_escaped) {
    return rewrite(
        text,
        [&](std::string& out, char32_t code, std::string_view bytes) {
            if (!shown_escaped(code)) {
                out.append(bytes);
            } else {
                out += code < 0x100 ? fmt::format("\\x{:02x}", static_cast<unsigned>(code))
                                    : fmt::format("\\u{:04x}", static_cast<unsigned>(code));
            }
        },
        [](std::string& out, unsigned char byte) { out += fmt::format("\\x{:02x}", byte); });
}

}  // namespace

std::string printable(std::string_view text) {
    return written_out(text, acts_on_terminal);
}

std::string printable_lines(std::string_view text) {
    return written_out(text, [](char32_t c) {
        if (c == '\t' || c == '\n') return false;
        return acts_on_terminal(c) || c == 0xFFFE || c == 0xFFFF;
    });
}

std::string valid_utf8(std::string_view text) {
    return rewrite(
        text, [](std::string& out, char32_t, std::string_view bytes) { out.append(bytes); },
        [](std::string& out, unsigned char) { out += "\xEF\xBF\xBD"; });
}

}  // namespace cumemctl
