// `toolcache trace`: placeholder until its issue lands.
#include <iostream>

#include "apps/toolcache/commands.h"

namespace toolcache::cli {

Command AddTraceCommand(CLI::App& root) {
  Command c;
  c.app = root.add_subcommand("trace", "(not yet available)");
  c.run = [] {
    std::cerr << "toolcache trace: not implemented yet\n";
    return kExitUsage;
  };
  return c;
}

}  // namespace toolcache::cli
