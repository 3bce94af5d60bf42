// `toolcache wrap [--unwrap] [--config F] [--toolcache PATH | --absolute]
// [--dry-run] FILE`: rewrites an mcpServers file so every stdio server runs
// behind `toolcache mcp` (or restores it), writing FILE.bak (or .bak.N)
// first. The command written is `toolcache` when PATH finds this very
// program, else its absolute path (said on stderr); see
// ChooseToolcacheCommand.
// The backup and the rewritten file get the original's permission bits (and
// owner and group where the process may set them) before any byte is
// written: such files often hold API keys in `env`, and a 0600 file must not
// come back world-readable.
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "apps/toolcache/commands.h"
#include "src/mcp/wrap.h"

namespace toolcache::cli {
namespace {

struct WrapArgs {
  std::string file;
  std::string config_path;
  std::string toolcache;
  bool unwrap = false;
  bool dry_run = false;
  bool absolute = false;
};

// Choice: when /proc/self/exe cannot be read (no /proc mounted), the bare
// name is the best guess.
std::string SelfPath() {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("toolcache") : p.string();
}

std::string ToolcacheFor(const WrapArgs& a) {
  if (!a.toolcache.empty()) return a.toolcache;
  const char* path = std::getenv("PATH");
  ToolcacheCommand c =
      ChooseToolcacheCommand(SelfPath(), path ? path : "", a.absolute);
  if (!c.note.empty() && !a.unwrap) {
    std::cerr << "toolcache wrap: " << c.note << "\n";
  }
  return c.command;
}

// Creates the new file `path` (O_EXCL: never an existing one) with the mode
// and, where permitted, the owner and group of `like`, then writes
// `content`. Returns 0, or the errno of the failure with `*error` set (the
// partial file removed); EEXIST means `path` exists.
int WriteLike(const std::string& path, const std::string& content,
              const struct stat& like, std::string* error) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    const int e = errno;
    *error = std::strerror(e);
    return e;
  }
  auto fail = [&](const char* what) {
    const int e = errno;
    *error = std::string(what) + ": " + std::strerror(e);
    close(fd);
    unlink(path.c_str());
    return e;
  };
  // Owner before mode (a chown may clear set-id bits). Choice: an owner or
  // group the process may not give is silently kept as the process's own;
  // the mode, which is what guards the content, must be set.
  if (fchown(fd, like.st_uid, like.st_gid) != 0) {
    if (fchown(fd, static_cast<uid_t>(-1), like.st_gid) != 0) {
      // Not permitted: the file stays ours, with the original's mode.
    }
  }
  if (fchmod(fd, like.st_mode & 07777) != 0) return fail("chmod");
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail("write");
    done += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0) return fail("fsync");
  if (close(fd) != 0) {
    const int e = errno;
    *error = std::string("close: ") + std::strerror(e);
    unlink(path.c_str());
    return e;
  }
  return 0;
}

// Choice: the first free name of FILE.bak, FILE.bak.1, ... so an earlier
// backup (possibly of the original file) is never overwritten. Returns the
// name written, or "" with `*error` set.
std::string WriteBackup(const std::string& file, const std::string& content,
                        const struct stat& like, std::string* error) {
  for (int i = 0; i < 10000; ++i) {
    std::string name =
        i == 0 ? file + ".bak" : file + ".bak." + std::to_string(i);
    const int e = WriteLike(name, content, like, error);
    if (e == 0) return name;
    if (e != EEXIST) {
      *error = "'" + name + "': " + *error;
      return "";
    }
  }
  *error = "no free backup name";
  return "";
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
  if (!a.unwrap) o.toolcache = ToolcacheFor(a);
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
  for (const std::string& s : r->retargeted) {
    std::cerr << "toolcache wrap: new toolcache command: " << s << "\n";
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
  struct stat original_stat;
  if (stat(a.file.c_str(), &original_stat) != 0) {
    std::cerr << "toolcache wrap: cannot stat '" << a.file
              << "': " << std::strerror(errno) << "\n";
    return kExitFailure;
  }
  std::string error;
  std::string backup = WriteBackup(a.file, original, original_stat, &error);
  if (backup.empty()) {
    std::cerr << "toolcache wrap: cannot write the backup of '" << a.file
              << "': " << error << "\n";
    return kExitFailure;
  }
  std::string tmp = a.file + ".toolcache-tmp";
  unlink(tmp.c_str());  // a leftover of an interrupted run
  if (WriteLike(tmp, r->text, original_stat, &error) != 0) {
    std::cerr << "toolcache wrap: cannot write '" << tmp << "': " << error
              << "\n";
    return kExitFailure;
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
  CLI::Option* command = c.app->add_option(
      "--toolcache", args->toolcache,
      "command that runs toolcache (default: 'toolcache' when PATH finds "
      "this program, else its absolute path)");
  c.app
      ->add_flag("--absolute", args->absolute,
                 "write this program's absolute path even when PATH finds it")
      ->excludes(command);
  c.app->add_flag("--dry-run", args->dry_run,
                  "print the result instead of writing the file");
  c.run = [args] { return Run(*args); };
  return c;
}

}  // namespace toolcache::cli
