#include "commands.hpp"
namespace cumemctl::cmd {
void register_fleet(CLI::App&, const Globals&, Runner&) {}
}
