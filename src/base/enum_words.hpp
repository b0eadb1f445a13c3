// The one way to name an enum: a constexpr table of each value with its word, which gives the word of
// a value, the value of a word (nullopt for a word it does not know: the parse error is the caller's
// to word, with `listed()` naming what it takes), and the words in order. Every enum-to-word mapping
// uses it: a value missing from its table reads as `fallback`, never as another's word.
//
//     constexpr auto kPathWords = enum_words<CopyPath>({{CopyPath::host_to_device, "h2d"}, ...}, "?");
//     kPathWords.word(CopyPath::peer);   // "peer"
//     kPathWords.parse("d2h");           // CopyPath::device_to_host
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace cumemctl {

template <class Enum, std::size_t N>
class EnumWords {
public:
    using Row = std::pair<Enum, std::string_view>;

    constexpr EnumWords(const std::array<Row, N>& rows, std::string_view fallback) : rows_(rows), fallback_(fallback) {}

    // The word of `value`; `fallback` for a value the table lacks.
    constexpr std::string_view word(Enum value) const {
        for (const Row& r : rows_) {
            if (r.first == value) return r.second;
        }
        return fallback_;
    }

    // The word of `value`, or nullopt for a value the table lacks (a driver's value newer than the table).
    constexpr std::optional<std::string_view> find(Enum value) const {
        for (const Row& r : rows_) {
            if (r.first == value) return r.second;
        }
        return std::nullopt;
    }

    // The value whose word is `word`, or nullopt: the caller words the parse error (listed() helps).
    constexpr std::optional<Enum> parse(std::string_view word) const {
        for (const Row& r : rows_) {
            if (r.second == word) return r.first;
        }
        return std::nullopt;
    }

    // The words in the table's order, joined by `separator`: "h2d, d2h, both".
    std::string listed(std::string_view separator = ", ") const {
        std::string out;
        for (const Row& r : rows_) {
            if (!out.empty()) out += separator;
            out += r.second;
        }
        return out;
    }

    // The rows, in order.
    constexpr const std::array<Row, N>& rows() const { return rows_; }

private:
    std::array<Row, N> rows_;
    std::string_view fallback_;
};

// A table from rows written in place: enum_words<CopyPath>({{CopyPath::peer, "peer"}, ...}, "?").
template <class Enum, std::size_t N>
constexpr EnumWords<Enum, N> enum_words(const std::pair<Enum, std::string_view> (&rows)[N], std::string_view fallback) {
    std::array<std::pair<Enum, std::string_view>, N> a{};
    for (std::size_t i = 0; i < N; ++i) a[i] = rows[i];
    return EnumWords<Enum, N>(a, fallback);
}

}  // namespace cumemctl
