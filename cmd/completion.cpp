#include "commands.hpp"
namespace cumemctl::cmd {
void register_completion(CLI::App&, const Globals&, Runner&) {}
}
