// toolcache: the command-line entry point. Parses, dispatches to one
// subcommand, and maps every usage error to exit code 2.
#include <exception>
#include <iostream>
#include <vector>

#include "apps/toolcache/build_info.h"
#include "apps/toolcache/cli_docs.h"
#include "apps/toolcache/commands.h"
#include "toolcache/classifier.h"

int main(int argc, char** argv) {
  namespace cli = toolcache::cli;
  // The classifier's LLM layer (classifier.llm) asks over HTTP and
  // remembers answers in the store: wired in here, before any Classifier,
  // by the same public call a program linking the library makes.
  toolcache::UseBuiltInLlmBackends();
  CLI::App root{
      "toolcache: a caching layer for LLM tool calls (MCP proxy, simulator, "
      "key and classifier tools)"};
  root.set_version_flag("--version", std::string("toolcache ") +
                                         TOOLCACHE_VERSION + " (git " +
                                         cli::GitRevision() + ")");
  root.require_subcommand(1);
  // One row per subcommand, in --help order.
  std::vector<cli::Command> commands = {
      cli::AddMcpCommand(root),      cli::AddWrapCommand(root),
      cli::AddProxyCommand(root),    cli::AddSimCommand(root),
      cli::AddTraceCommand(root),    cli::AddKeyCommand(root),
      cli::AddClassifyCommand(root), cli::AddServeCommand(root),
  };
  cli::AddDocsOptions(root, TOOLCACHE_VERSION);
  try {
    root.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    root.exit(e);
    return cli::kExitOk;
  } catch (const CLI::CallForAllHelp& e) {
    root.exit(e);
    return cli::kExitOk;
  } catch (const CLI::CallForVersion& e) {
    root.exit(e);
    return cli::kExitOk;
  } catch (const CLI::Success&) {  // --help-man, --completion: printed
    return cli::kExitOk;
  } catch (const CLI::ParseError& e) {
    std::cerr << "toolcache: " << e.what() << "\n"
              << "Run 'toolcache --help' for usage.\n";
    return cli::kExitUsage;
  }
  for (const cli::Command& c : commands) {
    if (c.app->parsed()) {
      try {
        return c.run();
      } catch (const std::exception& e) {
        // Exceptions only come from configuration loading (STYLE.md 14).
        std::cerr << "toolcache " << c.app->get_name() << ": " << e.what()
                  << "\n";
        return cli::kExitUsage;
      }
    }
  }
  return cli::kExitUsage;
}
