// The JSON of doctor's evidence (evidence.hpp): one writer for every type, driven by its field
// description. Number types are kept as the check measured them, so that a figure writes as it always did.
#include "doctor/evidence.hpp"

#include <type_traits>

#include "gpu/verify/verify_json.hpp"
#include "report/report.hpp"
#include "steps/step_json.hpp"

namespace cumemctl::doctor {
namespace {

template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};
template <class T>
struct IsVector : std::false_type {};
template <class T>
struct IsVector<std::vector<T>> : std::true_type {};

template <class T>
struct IsMaybe : std::false_type {};
template <class T>
struct IsMaybe<Maybe<T>> : std::true_type {};

template <class T>
nlohmann::json value_json(const T& v);

// Writes each field of a described value into `out`.
struct FieldWriter {
    nlohmann::json& out;
    template <class T, class... Mark>
    void operator()(const char* name, const T& member, Mark...) const {
        if constexpr (IsMaybe<T>::value) {  // absent while empty
            if (member) put(name, value_json(*member));
        } else {
            put(name, value_json(member));
        }
    }
    void put(const char* name, nlohmann::json value) const {
        if (*name != '\0') {
            out[name] = std::move(value);
            return;
        }
        for (auto& [key, item] : value.items()) out[key] = std::move(item);  // kMerged
    }
};

template <class T>
nlohmann::json value_json(const T& v) {
    if constexpr (std::is_same_v<T, std::vector<gpu::Capability>>) {
        return gpu::capabilities_json(v);
    } else if constexpr (IsOptional<T>::value) {
        return v ? value_json(*v) : nlohmann::json(nullptr);
    } else if constexpr (IsVector<T>::value) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& item : v) list.push_back(value_json(item));
        return list;
    } else if constexpr (std::is_same_v<T, CheckStatus>) {
        return std::string(status_name(v));
    } else if constexpr (std::is_same_v<T, Gbps> || std::is_same_v<T, GpuCount>) {
        return v.value;
    } else if constexpr (std::is_same_v<T, gpu::LocalityInfo>) {
        return gpu::locality_json(v);
    } else if constexpr (std::is_same_v<T, gpu::Placement>) {
        return gpu::placement_json(v);
    } else if constexpr (std::is_same_v<T, Holder>) {
        nlohmann::json j = to_json(v.process);
        FieldWriter w{j};
        w("seconds_running", v.seconds_running);
        w("seconds_running_unavailable", v.seconds_running_unavailable);
        return j;
    } else if constexpr (requires { T::fields(v, FieldWriter{std::declval<nlohmann::json&>()}); }) {
        nlohmann::json j = nlohmann::json::object();
        T::fields(v, FieldWriter{j});
        return j;
    } else if constexpr (requires { to_json(v); }) {
        return to_json(v);  // a type of another layer, with its own JSON
    } else {
        return nlohmann::json(v);
    }
}

}  // namespace

nlohmann::json to_json(const Evidence& evidence) {
    return std::visit([](const auto& e) { return value_json(e); }, evidence);
}

void add_held_by(nlohmann::json& details, const HeldBy& held) {
    FieldWriter w{details};
    w("held_by", held.holders);
    w("held_by_unavailable", held.unavailable);
}

}  // namespace cumemctl::doctor
