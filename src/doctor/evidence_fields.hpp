// How doctor's evidence (evidence.hpp) describes its fields: the mark of what fleet reads back, a field
// absent while empty, a field merged into its holder, and the types whose range fleet checks.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace cumemctl::doctor {

// The mark of a field that fleet reads back as well as the report's readers (people, scripts): fleet
// decodes it by its name and type, and refuses a report whose value is of another type or out of range.
// A field without it is skipped unbuilt. A field description is `fields(self, visit)`, calling
// visit(name, member) or visit(name, member, kReadByFleet) for each field.
struct ReadByFleet {};
inline constexpr ReadByFleet kReadByFleet{};

// A field absent from the JSON while empty (a std::optional field writes null instead). Assigning fills
// it, whatever the value: a Maybe<std::optional<T>> given std::nullopt holds a null and writes it.
template <class T>
struct Maybe : std::optional<T> {
    using std::optional<T>::optional;
    template <class U = T>
    requires(std::is_constructible_v<T, U&&> && !std::is_same_v<std::remove_cvref_t<U>, Maybe>) Maybe& operator=(
        U&& value) {
        this->emplace(std::forward<U>(value));
        return *this;
    }
};

// A text as evidence holds it: none for an empty one (written null), as report/json_fields.hpp's
// text_or_null writes it.
inline std::optional<std::string> text_or_none(const std::string& text) {
    return text.empty() ? std::nullopt : std::optional<std::string>(text);
}

// The name of a field whose members are written into the object that holds it (a type of another layer
// with a JSON of its own, such as NVML's memory health).
inline constexpr const char* kMerged = "";

// A bandwidth in GB/s: fleet reads it back as a number from 0 to its most.
struct Gbps {
    double value = 0;
    bool operator==(const Gbps&) const = default;
};

// A number of GPUs: fleet reads it back as a whole number from 1 to its cap.
struct GpuCount {
    std::size_t value = 0;
    bool operator==(const GpuCount&) const = default;
};

// A check's outcome carries no evidence (many skips): its details are an empty object.
struct NoEvidence {
    template <class Self, class Visit>
    static void fields(Self&, Visit&&) {}
};

}  // namespace cumemctl::doctor
