// CallPreparer: the request path's preparation stage (docs/ARCHITECTURE.md
// section 2). Everything the engine derives from one call alone -- the
// classifier's verdict, the full cache key and its scope, the policy's request
// features and the resources the call touches -- computed once, before any
// lock, by one pure function used by ToolCache (Begin, Peek, Record) and by the
// simulator's tool-call replay alike, so what is tuned in simulation is
// decided by the code that runs.
//
// What is NOT here is what depends on the cache's state at the time of the
// call (a server whose tool list is being re-fetched, an outstanding
// task-augmented write, the entries and flights): ToolCache applies those
// under its mutex, on top of the PreparedCall, in this order:
//   tools_refreshing -> verdict (not cacheable) -> the face's bypass_reason
//   -> task-augmented call -> task_in_progress -> key refusal
//   (user_required, invalid_arguments) -> lookup.
//
// A protocol-declared cacheability (ToolCall::declared: an MCP server's
// TTL and scope for a list or resources/read) becomes the verdict here
// instead of the classifier's.
//
// The classifier's verdict of a call depends only on the configuration,
// the tool's definition and the arguments; when every layer is
// deterministic (no extra extractor, no LLM extractor) a VerdictMemo that
// lives as long as one set of tool definitions remembers it, so a repeated
// call (every cache hit is one) is not classified again: 36,000 of the
// 84,000 instructions of a `serve` lookup hit (callgrind) were the
// classifier re-reading the same tool for the same arguments.
//
// Thread-safety: a CallPreparer is immutable after construction; Prepare is
// const and may run concurrently (the Classifier is immutable too). It
// reads no clock; the only lock it takes is a VerdictMemo's own. Ownership: the
// PreparedCall owns everything it holds except `args`, a view into the
// ToolCall's arguments.
//
// Example:
//   CallPreparer prep(config);
//   PreparedCall p = prep.Prepare({.server = "fs", .tool = "read_file",
//                                  .arguments_json = R"({"path":"/a"})"},
//                                 /*learned=*/nullptr);
//   if (p.verdict.cacheable && !p.refusal) Lookup(*p.key, p.features);
#ifndef TOOLCACHE_SRC_CACHE_PREPARE_H_
#define TOOLCACHE_SRC_CACHE_PREPARE_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "toolcache/classifier.h"
#include "toolcache/config.h"
#include "toolcache/key.h"
#include "toolcache/request_features.h"
#include "toolcache/tool_cache.h"
#include "toolcache/verdict.h"

namespace toolcache::cache_internal {

// Why a call whose verdict is cacheable still cannot use the cache; decided
// from the call alone (the state-dependent "task_in_progress" is not here).
struct KeyRefusal {
  VerdictReason reason = VerdictReason::kCacheable;
  std::string detail;  // Verdict::detail
  std::string name;    // the bypass statistics name
  // True for a task-augmented call: it is refused before the server's
  // task_in_progress state is looked at (Begin's historical order).
  bool before_state = false;
};

// Verdicts already decided against one set of tool definitions, by
// (server, tool, arguments text). Owned by that set (ToolCache's tool
// table), so a changed definition starts a new, empty memo. Bounded: at
// most kMaxEntries verdicts (then it starts over), and calls whose
// arguments are longer than kMaxArgs bytes are not remembered.
// Thread-safety: thread-safe (one internal mutex).
class VerdictMemo {
 public:
  static constexpr size_t kMaxEntries = 4096;
  static constexpr size_t kMaxArgs = 4096;
  std::optional<Verdict> Find(std::string_view server, std::string_view tool,
                              std::string_view args) const;
  void Put(std::string_view server, std::string_view tool,
           std::string_view args, const Verdict& v);

 private:
  static std::string KeyOf(std::string_view server, std::string_view tool,
                           std::string_view args);
  mutable std::mutex mu_;
  std::unordered_map<std::string, Verdict> verdicts_;
};

struct PreparedCall {
  // The classifier's verdict (learned definition, or the tool name alone).
  Verdict verdict;
  // The arguments text with surrounding JSON whitespace trimmed and absent /
  // null arguments as "{}" (a view into the call, or a static "{}").
  std::string_view args;
  // A COMMAND (verdict.request_type): the normalized resources it touches
  // (path, uri, ... arguments), for `invalidation: resource`. A cacheable
  // call, when asked for: the resources its key reads through (shared-store
  // dependencies).
  std::vector<std::string> resources;
  // Set when the verdict is cacheable but the call cannot use the cache.
  std::optional<KeyRefusal> refusal;
  // Cacheable and not refused: the full key (scope included), the key
  // scope's sharing rule, and the policy's features.
  std::optional<CacheKey> key;
  SharingScope sharing = SharingScope::kGlobal;
  std::string user;  // the policy's user feature: the call's user or scope
  uint64_t category = 0;
  double cost = 0;
};

class CallPreparer {
 public:
  // `extra` classifier layers run after the annotations and before the
  // heuristic (classifier.h).
  explicit CallPreparer(
      const Config& config,
      std::vector<std::unique_ptr<FeatureExtractor>> extra = {});

  // Prepares `call`. `learned` is the tool's definition from tools/list
  // (nullptr: classified from its name alone). `read_resources`: also list
  // the resources a cacheable call reads through (only a shared store needs
  // them). Pure: the same config, call and definition give the same
  // PreparedCall.
  // `memo`: the verdicts decided against the same definitions (may be
  // null); used only when every classifier layer is deterministic.
  PreparedCall Prepare(const ToolCall& call, const ToolInfo* learned,
                       bool read_resources = false,
                       VerdictMemo* memo = nullptr) const;

  // Who may share `server`'s entries: its `servers.<name>.scope`, else the
  // global `scope`.
  SharingScope ScopeOf(std::string_view server) const;

  const Config& config() const { return config_; }

 private:
  const Config config_;
  // No extra extractor and no LLM extractor: the same definition and
  // arguments always give the same verdict (VerdictMemo may keep it).
  const bool deterministic_;
  const Classifier classifier_;
  const FeatureBuilder features_;
};

// --- Resources (`invalidation: resource`), shared with ToolCache. ---

// Normalized string values of the resource-named top-level arguments (path,
// uri, ...; strings or arrays of strings) of a JSON arguments document,
// walked in place (a large "content" beside a "path" is never copied).
std::vector<std::string> ResourceValues(std::string_view args_json);
// A resource argument or invalidation target in comparable form (paths
// normalized lexically, file:// URIs as their local path, other URIs as
// given); nullopt: a file:// URI of another host.
std::optional<std::string> NormalizeResource(std::string_view value);
// The scheme of a URI ("file", "https"), or "" when `s` is not one.
std::string_view UriScheme(std::string_view s);
// True when a normalized resource is not an absolute path or URI (the
// server resolves it, so it may be any path).
bool IsUnanchored(std::string_view normalized);
// True when `a` and `b` name the same resource or one contains the other.
bool ResourcesOverlap(std::string_view a, std::string_view b);

// True when an entry's key scope was made from the call scope `call_scope`
// (ToolCall::scope): the scope itself, under `scope: user` the scope of
// one of its users, or an MCP session's scope under it (its roots or
// envelope era after '\x1e' / '\x1f').
bool KeyScopeOf(std::string_view key_scope, std::string_view call_scope);

// The key scope of the entries a server declared public (MCP cacheScope
// "public") for the callers of `group` ("" = every caller of the cache).
// Reserved: it starts with "@public;", which no call scope does (ScopeOf's
// composed form is '@' and a field tag, its legacy form never starts with
// '@', UserScope starts with a control byte, and serve refuses a tenant
// named with a leading '@'), so a private entry of any scope, "" included,
// is never read as a public one.
std::string PublicScope(std::string_view group);

}  // namespace toolcache::cache_internal

#endif  // TOOLCACHE_SRC_CACHE_PREPARE_H_
