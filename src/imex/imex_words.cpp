#include "imex/imex_words.hpp"

#include <utility>

#include "base/property_words.hpp"

namespace cumemctl::imex {
namespace {

constexpr PropertyWords<ImexProperty> kImexWords[] = {
    {ImexProperty::proc_devices, "proc_devices", "the devices path"},
    {ImexProperty::params, "params", "the params path"},
    {ImexProperty::dev_root, "dev_root", "the device root"},
    {ImexProperty::owner, "owner", "the channels' owner"},
    {ImexProperty::mode, "mode", "the channels' mode"},
    {ImexProperty::force, "force", "a forced run"},
    {ImexProperty::check, "check", "a check-only run"},
    {ImexProperty::dry_run, "dry_run", "a dry run"},
};

}  // namespace

std::string imex_property_words(ImexProperty property) {
    return std::string(property_entry(kImexWords, property).words);
}

std::string imex_placeholder(ImexProperty property) {
    return property_placeholder(kImexWords, property);
}

std::string imex_words(std::string_view text, ImexNames names) {
    return fill_properties(text, kImexWords, names);
}

Problem imex_words(Problem problem, ImexNames names) {
    return fill_problem(std::move(problem), [&](const std::string& text) { return imex_words(text, names); });
}

ImexError::ImexError(Problem problem)
    : PropertyError(std::move(problem), static_cast<std::string (*)(std::string_view, ImexNames)>(imex_words),
                    imex_property_words) {}

}  // namespace cumemctl::imex
