// `toolcache key`: placeholder until its issue lands.
#include <iostream>

#include "apps/toolcache/commands.h"

namespace toolcache::cli {

Command AddKeyCommand(CLI::App& root) {
  Command c;
  c.app = root.add_subcommand("key", "(not yet available)");
  c.run = [] {
    std::cerr << "toolcache key: not implemented yet\n";
    return kExitUsage;
  };
  return c;
}

}  // namespace toolcache::cli
