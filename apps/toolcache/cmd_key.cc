// `toolcache key`: shows the cache key of a tool call, so users can see why
// two calls do or do not share an entry.
//
//   toolcache key [--server S] [--scope S] [--ignore F]... [--keep-meta]
//                 [--format text|json] <tool> ['<json arguments>' | -]
//       prints the canonical arguments, the SHA-256 digest and the 64-bit id.
//   toolcache key --canonical [--ignore F]... [--keep-meta] < in.json
//       writes exactly the canonical bytes (no trailing newline) on stdout.
//
// Bad JSON -> a message naming line:column and the problem on stderr, exit 2.
#include <fmt/format.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apps/toolcache/commands.h"
#include "toolcache/canonical_json.h"
#include "toolcache/key.h"

namespace toolcache::cli {
namespace {

struct KeyFlags {
  bool canonical = false;
  bool keep_meta = false;
  std::string server;
  std::string scope;
  std::vector<std::string> ignore;
  std::string format = "text";
  int32_t max_depth = kDefaultMaxJsonDepth;
  uint64_t max_bytes = kDefaultMaxJsonBytes;
  std::string tool;
  std::string json;
  bool json_given = false;
};

// Reads all of stdin, stopping once it is longer than `limit` (0 = no
// limit): the canonicalizer then reports the size error.
bool ReadStdin(uint64_t limit, std::string* out) {
  char buf[1 << 16];
  while (true) {
    const size_t n = std::fread(buf, 1, sizeof(buf), stdin);
    out->append(buf, n);
    if (limit != 0 && out->size() > limit) return true;
    if (n < sizeof(buf)) return std::ferror(stdin) == 0;
  }
}

bool WriteStdout(std::string_view bytes) {
  return std::fwrite(bytes.data(), 1, bytes.size(), stdout) == bytes.size() &&
         std::fflush(stdout) == 0;
}

std::string Hex64(uint64_t v) { return fmt::format("{:016x}", v); }

int Run(const KeyFlags& f) {
  CanonicalOptions options;
  // Choice: --canonical drops _meta/--ignore like the key (--keep-meta: not).
  options.drop_meta = !f.keep_meta;
  options.ignore_fields = f.ignore;
  options.max_depth = f.max_depth;
  options.max_bytes = f.max_bytes;

  if (f.canonical && (!f.tool.empty() || f.json_given)) {
    std::cerr << "toolcache key: --canonical reads JSON on stdin and takes no "
                 "positional arguments\n";
    return kExitUsage;
  }
  if (!f.canonical && f.tool.empty()) {
    std::cerr << "toolcache key: missing <tool> (or use --canonical to "
                 "canonicalize stdin)\n";
    return kExitUsage;
  }
  std::string input;
  const bool from_stdin = f.canonical || !f.json_given || f.json == "-";
  if (from_stdin) {
    if (!ReadStdin(f.max_bytes, &input)) {
      std::cerr << "toolcache key: error reading stdin\n";
      return kExitFailure;
    }
  } else {
    input = f.json;
  }
  const std::string source = from_stdin ? "<stdin>" : "arguments";

  Result<std::string> canonical = CanonicalizeJson(input, options);
  if (!canonical.ok()) {
    std::cerr << "toolcache key: invalid JSON in " << source << ": "
              << canonical.status().message() << "\n";
    return kExitUsage;
  }
  if (f.canonical) {
    // Choice: exact canonical bytes, no trailing newline, so `cmp` works.
    return WriteStdout(*canonical) ? kExitOk : kExitFailure;
  }

  const CacheKey key{.scope = f.scope,
                     .server = f.server,
                     .tool = f.tool,
                     .canonical_args = std::move(*canonical)};
  std::string out;
  if (f.format == "json") {
    nlohmann::json j = {
        {"scope", key.scope},        {"server", key.server},
        {"tool", key.tool},          {"canonical_args", key.canonical_args},
        {"digest", key.DigestHex()}, {"id", Hex64(key.Id())}};
    out = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    out += "\n";
  } else {
    // Choice: scope/server/tool printed JSON-quoted so "" is visible.
    auto quoted = [](const std::string& s) {
      return nlohmann::json(s).dump(-1, ' ', false,
                                    nlohmann::json::error_handler_t::replace);
    };
    out = fmt::format(
        "scope: {}\nserver: {}\ntool: {}\ncanonical: {}\ndigest: {}\nid: {}\n",
        quoted(key.scope), quoted(key.server), quoted(key.tool),
        key.canonical_args, key.DigestHex(), Hex64(key.Id()));
  }
  return WriteStdout(out) ? kExitOk : kExitFailure;
}

}  // namespace

Command AddKeyCommand(CLI::App& root) {
  auto flags = std::make_shared<KeyFlags>();
  Command c;
  c.app = root.add_subcommand(
      "key",
      "Show the cache key of a tool call: canonical (RFC 8785) arguments, "
      "SHA-256 digest and id; or canonicalize stdin with --canonical");
  CLI::App& app = *c.app;
  app.add_flag("--canonical", flags->canonical,
               "Read JSON on stdin and write only its canonical form (exact "
               "bytes, no trailing newline) on stdout");
  app.add_option("--server", flags->server,
                 "Server identity that is part of the key (default \"\")");
  app.add_option("--scope", flags->scope,
                 "Sharing scope (tenant/user) that is part of the key "
                 "(default \"\" = global)");
  app.add_option("--ignore", flags->ignore,
                 "Top-level argument member to leave out of the key "
                 "(repeatable)")
      ->take_all()
      ->allow_extra_args(false);
  app.add_flag("--keep-meta", flags->keep_meta,
               "Keep the top-level \"_meta\" member (dropped by default)");
  app.add_option("--format", flags->format, "Output format: text or json")
      ->check(CLI::IsMember({"text", "json"}));
  app.add_option("--max-depth", flags->max_depth,
                 "Maximum nesting depth, 1..4096 (default 128)")
      ->check(CLI::Range(1, 4096));
  app.add_option("--max-bytes", flags->max_bytes,
                 "Maximum input size in bytes; 0 = unlimited (default 16 MiB)");
  app.add_option("tool", flags->tool, "Tool name");
  app.add_option("json", flags->json,
                 "Arguments as JSON text; '-' or absent reads stdin")
      ->each([flags](const std::string&) { flags->json_given = true; });
  c.run = [flags] { return Run(*flags); };
  return c;
}

}  // namespace toolcache::cli
