// `toolcache mcp`: placeholder until its issue lands.
#include <iostream>

#include "apps/toolcache/commands.h"

namespace toolcache::cli {

Command AddMcpCommand(CLI::App& root) {
  Command c;
  c.app = root.add_subcommand("mcp", "(not yet available)");
  c.run = [] {
    std::cerr << "toolcache mcp: not implemented yet\n";
    return kExitUsage;
  };
  return c;
}

}  // namespace toolcache::cli
