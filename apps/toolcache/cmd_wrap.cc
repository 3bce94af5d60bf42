// `toolcache wrap`: placeholder until its issue lands.
#include <iostream>

#include "apps/toolcache/commands.h"

namespace toolcache::cli {

Command AddWrapCommand(CLI::App& root) {
  Command c;
  c.app = root.add_subcommand("wrap", "(not yet available)");
  c.run = [] {
    std::cerr << "toolcache wrap: not implemented yet\n";
    return kExitUsage;
  };
  return c;
}

}  // namespace toolcache::cli
