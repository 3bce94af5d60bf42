// `toolcache wrap [--unwrap] [--config F] [--toolcache PATH] [--dry-run] FILE`:
// rewrites an mcpServers file so every stdio server runs behind
// `toolcache mcp` (or restores it), writing FILE.bak (or .bak.N) first.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "apps/toolcache/commands.h"
#include "toolcache/mcp_wrap.h"

namespace toolcache::cli {
namespace {

struct WrapArgs {
  std::string file;
  std::string config_path;
  std::string toolcache;
  bool unwrap = false;
  bool dry_run = false;
};

std::string SelfPath() {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("toolcache") : p.string();
}

// Choice: the first free name of FILE.bak, FILE.bak.1, ... so an earlier
// backup (possibly of the original file) is never overwritten.
std::string BackupName(const std::string& file) {
  std::string name = file + ".bak";
  for (int i = 1; std::filesystem::exists(name); ++i) {
    name = file + ".bak." + std::to_string(i);
  }
  return name;
}

int Run(const WrapArgs& a) {
  std::ifstream in(a.file, std::ios::binary);
  if (!in) {
    std::cerr << "toolcache wrap: cannot read '" << a.file << "'\n";
    return kExitUsage;
  }
  std::stringstream buf;
  buf << in.rdbuf();
  std::string original = buf.str();
  WrapOptions o;
  o.toolcache = a.toolcache.empty() ? SelfPath() : a.toolcache;
  if (!a.config_path.empty()) {
    o.config_path = std::filesystem::absolute(a.config_path).string();
  }
  Result<WrapOutcome> r =
      a.unwrap ? UnwrapMcpServers(original) : WrapMcpServers(original, o);
  if (!r.ok()) {
    std::cerr << "toolcache wrap: " << a.file << ": " << r.status().message()
              << "\n";
    return kExitUsage;
  }
  for (const std::string& s : r->skipped) {
    std::cerr << "toolcache wrap: left alone: " << s << "\n";
  }
  if (a.dry_run) {
    std::cout << r->text;
    return kExitOk;
  }
  if (r->changed.empty()) {
    std::cerr << "toolcache wrap: nothing to " << (a.unwrap ? "unwrap" : "wrap")
              << " in " << a.file << "\n";
    return kExitOk;
  }
  std::string backup = BackupName(a.file);
  {
    std::ofstream b(backup, std::ios::binary);
    b << original;
    if (!b) {
      std::cerr << "toolcache wrap: cannot write backup '" << backup << "'\n";
      return kExitFailure;
    }
  }
  std::string tmp = a.file + ".toolcache-tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    out << r->text;
    if (!out) {
      std::cerr << "toolcache wrap: cannot write '" << tmp << "'\n";
      return kExitFailure;
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, a.file, ec);
  if (ec) {
    std::cerr << "toolcache wrap: cannot replace '" << a.file
              << "': " << ec.message() << "\n";
    return kExitFailure;
  }
  std::cerr << "toolcache wrap: " << (a.unwrap ? "unwrapped" : "wrapped") << " "
            << r->changed.size() << " server(s) in " << a.file
            << " (backup: " << backup << ")\n";
  return kExitOk;
}

}  // namespace

Command AddWrapCommand(CLI::App& root) {
  auto args = std::make_shared<WrapArgs>();
  Command c;
  c.app = root.add_subcommand(
      "wrap",
      "Rewrite an mcpServers file (.mcp.json, claude_desktop_config.json) so "
      "every stdio server runs behind 'toolcache mcp'; --unwrap restores it");
  c.app->add_option("file", args->file, "the JSON configuration file")
      ->required();
  c.app->add_flag("--unwrap", args->unwrap, "restore the original servers");
  c.app
      ->add_option("--config", args->config_path,
                   "toolcache YAML config passed to every wrapped server")
      ->check(CLI::ExistingFile);
  c.app->add_option(
      "--toolcache", args->toolcache,
      "command that runs toolcache (default: this binary's path)");
  c.app->add_flag("--dry-run", args->dry_run,
                  "print the result instead of writing the file");
  c.run = [args] { return Run(*args); };
  return c;
}

}  // namespace toolcache::cli
