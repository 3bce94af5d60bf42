// `toolcache sim`: placeholder until its issue lands.
#include <iostream>

#include "apps/toolcache/commands.h"

namespace toolcache::cli {

Command AddSimCommand(CLI::App& root) {
  Command c;
  c.app = root.add_subcommand("sim", "(not yet available)");
  c.run = [] {
    std::cerr << "toolcache sim: not implemented yet\n";
    return kExitUsage;
  };
  return c;
}

}  // namespace toolcache::cli
