// `toolcache classify`: placeholder until its issue lands.
#include <iostream>

#include "apps/toolcache/commands.h"

namespace toolcache::cli {

Command AddClassifyCommand(CLI::App& root) {
  Command c;
  c.app = root.add_subcommand("classify", "(not yet available)");
  c.run = [] {
    std::cerr << "toolcache classify: not implemented yet\n";
    return kExitUsage;
  };
  return c;
}

}  // namespace toolcache::cli
