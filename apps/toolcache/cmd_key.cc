// `toolcache key`: shows the cache key of a tool call, so users can see why
// two calls do or do not share an entry.
//
//   toolcache key [--server S] [--scope S] [--ignore F]...
//                 [--format text|json] <tool> ['<json arguments>' | -]
//       prints the canonical arguments, the SHA-256 digest and the 64-bit id.
//       The arguments must be a JSON object; "_meta" is always dropped.
//       Integers a double cannot hold keep their exact digits in the key (a
//       "numbers:" line / "exact_integers" names them), unlike RFC 8785.
//   toolcache key --canonical < in.json
//       writes exactly the RFC 8785 form of any JSON value (nothing dropped,
//       no trailing newline) on stdout.
//   toolcache key --canonical --lines < docs.jsonl
//       one document per input line; per line, its RFC 8785 form or
//       "error: <message>", each followed by '\n' (for batch comparisons
//       against other implementations, fuzz/differential/).
//
// Bad JSON -> a message naming line:column and the problem on stderr, exit 2;
// arguments that are not an object, unreadable stdin and flags that do not
// apply to --canonical -> a message and exit 2 as well.
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
  bool lines = false;  // --canonical: one document per line
  std::string server;
  std::string scope;
  std::vector<std::string> ignore;
  std::string format = "text";
  int32_t max_depth = kDefaultMaxJsonDepth;
  uint64_t max_bytes = kDefaultMaxJsonBytes;
  std::string tool;
  std::string json;
  bool json_given = false;
  // Options that only make sense for a key; --canonical rejects them.
  std::vector<const CLI::Option*> key_only;
};

bool WriteStdout(std::string_view bytes) {
  return std::fwrite(bytes.data(), 1, bytes.size(), stdout) == bytes.size() &&
         std::fflush(stdout) == 0;
}

// --canonical --lines: each line of `input` is one document.
int CanonicalLines(std::string_view input, const KeyFlags& f) {
  CanonicalOptions plain;
  plain.drop_meta = false;
  plain.max_depth = f.max_depth;
  plain.max_bytes = f.max_bytes;
  std::string out;
  while (!input.empty()) {
    const size_t nl = input.find('\n');
    const std::string_view line = input.substr(0, nl);
    input.remove_prefix(nl == std::string_view::npos ? input.size() : nl + 1);
    Result<std::string> c = CanonicalizeJson(line, plain);
    out += c.ok() ? *c : "error: " + c.status().message();
    out += '\n';
  }
  return WriteStdout(out) ? kExitOk : kExitFailure;
}

std::string Hex64(uint64_t v) { return fmt::format("{:016x}", v); }

int Run(const KeyFlags& f) {
  if (f.canonical && (!f.tool.empty() || f.json_given)) {
    std::cerr << "toolcache key: --canonical reads JSON on stdin and takes no "
                 "positional arguments\n";
    return kExitUsage;
  }
  if (f.canonical) {
    for (const CLI::Option* o : f.key_only) {
      if (o->count() > 0) {
        std::cerr << "toolcache key: " << o->get_name()
                  << " applies to a key, not to --canonical (which writes "
                     "plain RFC 8785 and drops nothing)\n";
        return kExitUsage;
      }
    }
  }
  if (f.lines && !f.canonical) {
    std::cerr << "toolcache key: --lines applies to --canonical only\n";
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
    std::string error;
    bool too_long = false;
    if (!ReadCapped(stdin, f.max_bytes, &input, &too_long, &error)) {
      std::cerr << "toolcache key: cannot read stdin: " << error << "\n";
      return kExitUsage;
    }
    if (too_long) {
      std::cerr << "toolcache key: <stdin> is longer than the limit of "
                << f.max_bytes << " bytes (--max-bytes; 0 = no limit)\n";
      return kExitUsage;
    }
  } else {
    input = f.json;
  }
  const std::string source = from_stdin ? "<stdin>" : "arguments";
  if (f.lines) return CanonicalLines(input, f);

  // Step 1, both modes: plain RFC 8785 (nothing dropped), so bad JSON gets
  // its own message, distinct from a valid document that is not an object.
  CanonicalOptions plain;
  plain.drop_meta = false;
  plain.max_depth = f.max_depth;
  plain.max_bytes = f.max_bytes;
  Result<std::string> canonical = CanonicalizeJson(input, plain);
  if (!canonical.ok()) {
    std::cerr << "toolcache key: invalid JSON in " << source << ": "
              << canonical.status().message() << "\n";
    return kExitUsage;
  }
  if (f.canonical) {
    // Choice: exact canonical bytes, no trailing newline, so `cmp` works.
    return WriteStdout(*canonical) ? kExitOk : kExitFailure;
  }

  // Step 2: the engine's own key builder (drops _meta and --ignore, requires
  // an object, keeps integers a double cannot hold exactly), on the input
  // itself: the RFC 8785 text of step 1 has already rounded such integers.
  CanonicalOptions key_options;
  key_options.ignore_fields = f.ignore;
  key_options.max_depth = f.max_depth;
  key_options.max_bytes = f.max_bytes;
  Result<CacheKey> made =
      MakeCacheKey(f.scope, f.server, f.tool, input, key_options);
  if (!made.ok()) {
    std::cerr << "toolcache key: tool " << made.status().message()
              << (from_stdin ? " on <stdin>" : "")
              << "; use --canonical to canonicalize any JSON value\n";
    return kExitUsage;
  }
  // Where the key departs from RFC 8785 (integers beyond a double), say so.
  Result<std::vector<std::string>> exact =
      FindInexactIntegers(input, key_options);
  const std::vector<std::string> exact_at =
      exact.ok() ? *exact : std::vector<std::string>();
  const CacheKey& key = *made;
  std::string out;
  if (f.format == "json") {
    nlohmann::json j = {
        {"scope", key.scope},         {"server", key.server},
        {"tool", key.tool},           {"canonical_args", key.canonical_args},
        {"exact_integers", exact_at}, {"digest", key.DigestHex()},
        {"id", Hex64(key.Id())}};
    out = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    out += "\n";
  } else {
    // Choice: scope/server/tool printed JSON-quoted so "" is visible.
    auto quoted = [](const std::string& s) {
      return nlohmann::json(s).dump(-1, ' ', false,
                                    nlohmann::json::error_handler_t::replace);
    };
    out = fmt::format("scope: {}\nserver: {}\ntool: {}\ncanonical: {}\n",
                      quoted(key.scope), quoted(key.server), quoted(key.tool),
                      key.canonical_args);
    if (!exact_at.empty()) {
      std::string where;
      for (const std::string& p : exact_at) {
        if (!where.empty()) where += ", ";
        where += quoted(p);
      }
      // Choice: said only when it happens, so ordinary output is unchanged.
      out += fmt::format(
          "numbers: exact integer digits kept at {} (a double cannot hold "
          "them; RFC 8785, as --canonical prints it, would round them and "
          "equate calls a server tells apart)\n",
          where);
    }
    out +=
        fmt::format("digest: {}\nid: {}\n", key.DigestHex(), Hex64(key.Id()));
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
               "Read any JSON value on stdin and write only its RFC 8785 "
               "canonical form (exact bytes, nothing dropped, no trailing "
               "newline) on stdout");
  app.add_flag("--lines", flags->lines,
               "With --canonical: each stdin line is one document; writes "
               "one line per document, its canonical form or \"error: ...\"");
  flags->key_only.push_back(
      app.add_option("--server", flags->server,
                     "Server identity that is part of the key (default \"\")"));
  flags->key_only.push_back(
      app.add_option("--scope", flags->scope,
                     "Sharing scope (tenant/user) that is part of the key "
                     "(default \"\" = global)"));
  flags->key_only.push_back(
      app.add_option("--ignore", flags->ignore,
                     "Top-level argument member to leave out of the key "
                     "(repeatable); the top-level \"_meta\" is always left "
                     "out")
          ->take_all()
          ->allow_extra_args(false));
  flags->key_only.push_back(
      app.add_option("--format", flags->format,
                     "Output format of the key: text or json")
          ->check(CLI::IsMember({"text", "json"})));
  app.add_option("--max-depth", flags->max_depth,
                 "Maximum nesting depth, 1..4096 (default 128)")
      ->check(CLI::Range(1, 4096));
  app.add_option("--max-bytes", flags->max_bytes,
                 "Maximum input size in bytes; 0 = unlimited (default 16 MiB)");
  app.add_option("tool", flags->tool, "Tool name");
  app.add_option("json", flags->json,
                 "Arguments as a JSON object; '-' or absent reads stdin")
      ->each([flags](const std::string&) { flags->json_given = true; });
  c.run = [flags] { return Run(*flags); };
  return c;
}

}  // namespace toolcache::cli
