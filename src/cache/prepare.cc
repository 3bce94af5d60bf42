// CallPreparer (prepare.h): the request path's preparation stage.
//
// Invariants:
// - Prepare is a function of (Config, extra layers, call, learned tool
//   definition) only: no clock, no lock, no cache state. ToolCache and the
//   simulator's tool-call replay both call it, so they cannot disagree on a
//   verdict, key, scope or feature.
// - The arguments are parsed at most once per call, by the key's
//   canonicalizer (CanonicalizeArguments, on first need): the classifier's
//   argument rules read its top-level members (caller's order), the key is
//   its canonical text, and the feature builder reads its members (byte
//   order of names, so a reordered call groups alike). Only arguments the
//   canonicalizer refuses are parsed again, leniently, by the heuristic, so
//   their verdict (a COMMAND that must invalidate) is what it always was;
//   such a call never gets a key. prepare_corpus_test pins the outputs.
//   The resource scanner walks only the top level of a COMMAND's arguments
//   (or of a cacheable call's canonical text) and copies only resource
//   values.
// - A refusal never loses the verdict's type: a refused cacheable call
//   keeps request_type INFORMATIONAL (it is not a write).
// - Resource strings are compared only in normalized form
//   (NormalizeResource); a relative path matches everything of its server
//   (IsUnanchored).
#include "src/cache/prepare.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "toolcache/canonical_json.h"
#include "toolcache/key.h"

namespace toolcache::cache_internal {

namespace {

bool IsJsonSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// Choice: argument names that identify the resource a call touches, for the
// "resource" invalidation scope (filesystem paths, URIs, move source/target).
constexpr std::string_view kResourceArgNames[] = {
    "path",     "paths",     "uri",       "url",      "file",
    "filename", "file_path", "filepath",  "source",   "destination",
    "target",   "dir",       "directory", "resource", "uri_template"};

bool IsResourceArg(std::string_view name) {
  return std::find(std::begin(kResourceArgNames), std::end(kResourceArgNames),
                   name) != std::end(kResourceArgNames);
}

// Lexically normalized POSIX path: "." and empty segments dropped, ".."
// resolved (never above the root), no trailing '/' (except "/" itself).
std::string NormalizePath(std::string_view path) {
  const bool absolute = !path.empty() && path.front() == '/';
  std::vector<std::string_view> parts;
  while (!path.empty()) {
    const size_t slash = path.find('/');
    std::string_view seg = path.substr(0, slash);
    path = slash == std::string_view::npos ? std::string_view()
                                           : path.substr(slash + 1);
    if (seg.empty() || seg == ".") continue;
    if (seg == "..") {
      if (!parts.empty() && parts.back() != "..") {
        parts.pop_back();
      } else if (!absolute) {
        parts.push_back(seg);  // a relative path may climb; "/.." is "/"
      }
      continue;
    }
    parts.push_back(seg);
  }
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0 || absolute) out.push_back('/');
    out.append(parts[i].data(), parts[i].size());
  }
  if (out.empty() && absolute) out.push_back('/');
  if (out.empty()) out.push_back('.');
  return out;
}

}  // namespace

// The scheme of a URI ("file", "https"), or "" when `s` is not one. Choice:
// a one-letter "scheme" is a Windows drive (C:\x), not a URI.
std::string_view UriScheme(std::string_view s) {
  const size_t colon = s.find(':');
  if (colon == std::string_view::npos || colon < 2) return {};
  for (size_t i = 0; i < colon; ++i) {
    const char c = s[i];
    const bool ok = std::isalpha(static_cast<unsigned char>(c)) ||
                    (i > 0 && (std::isdigit(static_cast<unsigned char>(c)) ||
                               c == '+' || c == '-' || c == '.'));
    if (!ok) return {};
  }
  return s.substr(0, colon);
}

namespace {

// The local path a file:// URI names (percent-decoded), or nullopt when it
// names another host or is malformed (RFC 8089: file:///p, file://localhost/p
// and file:/p are local).
std::optional<std::string> FileUriPath(std::string_view uri) {
  std::string_view rest = uri.substr(5);  // after "file:"
  rest = rest.substr(0, rest.find_first_of("?#"));
  if (rest.substr(0, 2) == "//") {
    rest.remove_prefix(2);
    const size_t slash = rest.find('/');
    if (slash == std::string_view::npos) return std::nullopt;
    std::string_view host = rest.substr(0, slash);
    if (!host.empty() && host != "localhost") return std::nullopt;
    rest.remove_prefix(slash);
  }
  if (rest.empty() || rest.front() != '/') return std::nullopt;
  std::string path;
  for (size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] != '%') {
      path += rest[i];
      continue;
    }
    if (i + 2 >= rest.size() ||
        !std::isxdigit(static_cast<unsigned char>(rest[i + 1])) ||
        !std::isxdigit(static_cast<unsigned char>(rest[i + 2]))) {
      return std::nullopt;
    }
    path += static_cast<char>(
        std::stoi(std::string(rest.substr(i + 1, 2)), nullptr, 16));
    i += 2;
  }
  return NormalizePath(path);
}

}  // namespace

// A resource argument or invalidation target in comparable form: paths
// normalized lexically, file:// URIs as their local path, other URIs as
// given. nullopt: a file:// URI of another host (no local path).
std::optional<std::string> NormalizeResource(std::string_view value) {
  std::string_view scheme = UriScheme(value);
  if (scheme.empty()) return NormalizePath(value);
  std::string lower(scheme);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  if (lower == "file") return FileUriPath(value);
  return std::string(value);
}

namespace {

// Position just after the JSON string literal starting at text[pos] (a
// '"'), or npos when it is not terminated.
size_t SkipString(std::string_view text, size_t pos) {
  for (size_t i = pos + 1; i < text.size(); ++i) {
    if (text[i] == '\\') {
      ++i;
    } else if (text[i] == '"') {
      return i + 1;
    }
  }
  return std::string_view::npos;
}

// Position just after the JSON value starting at text[pos], or npos. The
// value is walked, never copied (strings, nesting); scalars end at the next
// ',', '}', ']' or whitespace.
size_t SkipValue(std::string_view text, size_t pos) {
  if (pos >= text.size()) return std::string_view::npos;
  const char c = text[pos];
  if (c == '"') return SkipString(text, pos);
  if (c != '{' && c != '[') {
    while (pos < text.size() && text[pos] != ',' && text[pos] != '}' &&
           text[pos] != ']' && !IsJsonSpace(text[pos])) {
      ++pos;
    }
    return pos;
  }
  int depth = 0;
  for (size_t i = pos; i < text.size(); ++i) {
    const char d = text[i];
    if (d == '"') {
      i = SkipString(text, i);
      if (i == std::string_view::npos) return i;
      --i;
    } else if (d == '{' || d == '[') {
      ++depth;
    } else if ((d == '}' || d == ']') && --depth == 0) {
      return i + 1;
    }
  }
  return std::string_view::npos;
}

size_t SkipSpace(std::string_view text, size_t pos) {
  while (pos < text.size() && IsJsonSpace(text[pos])) ++pos;
  return pos;
}

// The decoded text of a JSON string literal (nullopt when it is not one).
std::optional<std::string> DecodeLiteral(std::string_view literal) {
  if (literal.size() < 2 || literal.front() != '"') return std::nullopt;
  if (literal.find('\\') == std::string_view::npos) {
    return std::string(literal.substr(1, literal.size() - 2));
  }
  nlohmann::json j = nlohmann::json::parse(literal, nullptr, false);
  if (!j.is_string()) return std::nullopt;
  return j.get<std::string>();
}

}  // namespace

// Normalized string values of the resource-named top-level arguments
// (strings or arrays of strings) of a JSON arguments document. Only the
// top level is walked and only resource values are decoded: a 60 MiB
// "content" beside a "path" is skipped in place, never copied (a DOM parse
// held it twice more). A document that is not a well-formed object yields
// what was found before the problem (nothing, when it is not an object).
std::vector<std::string> ResourceValues(std::string_view args_json) {
  std::vector<std::string> out;
  auto add = [&](std::string_view literal) {
    std::optional<std::string> v = DecodeLiteral(literal);
    if (!v) return;
    std::optional<std::string> n = NormalizeResource(*v);
    out.push_back(n ? std::move(*n) : std::move(*v));
  };
  size_t pos = SkipSpace(args_json, 0);
  if (pos >= args_json.size() || args_json[pos] != '{') return out;
  pos = SkipSpace(args_json, pos + 1);
  while (pos < args_json.size() && args_json[pos] == '"') {
    const size_t name_end = SkipString(args_json, pos);
    if (name_end == std::string_view::npos) return out;
    const std::optional<std::string> name =
        DecodeLiteral(args_json.substr(pos, name_end - pos));
    pos = SkipSpace(args_json, name_end);
    if (pos >= args_json.size() || args_json[pos] != ':') return out;
    pos = SkipSpace(args_json, pos + 1);
    const size_t value_end = SkipValue(args_json, pos);
    if (value_end == std::string_view::npos) return out;
    const std::string_view value = args_json.substr(pos, value_end - pos);
    if (name && IsResourceArg(*name)) {
      if (value.front() == '"') {
        add(value);
      } else if (value.front() == '[') {
        size_t e = SkipSpace(value, 1);
        while (e < value.size() && value[e] != ']') {
          const size_t end = SkipValue(value, e);
          if (end == std::string_view::npos) break;
          if (value[e] == '"') add(value.substr(e, end - e));
          e = SkipSpace(value, end);
          if (e < value.size() && value[e] == ',') e = SkipSpace(value, e + 1);
        }
      }
    }
    pos = SkipSpace(args_json, value_end);
    if (pos < args_json.size() && args_json[pos] == ',') {
      pos = SkipSpace(args_json, pos + 1);
    }
  }
  return out;
}

// True when a normalized resource cannot be placed in the file system
// without knowing the server: a path that is not absolute ("a.txt", ".",
// "~/x", "C:/x"). The server resolves it against its working directory,
// its allowed folders or its roots (server-filesystem: the first allowed
// folder, which changes with the roots), so it may be any path.
bool IsUnanchored(std::string_view normalized) {
  return UriScheme(normalized).empty() &&
         (normalized.empty() || normalized.front() != '/');
}

// True when `a` and `b` name the same resource or one contains the other
// (a directory and a file below it).
bool ResourcesOverlap(std::string_view a, std::string_view b) {
  if (a == b) return true;
  auto below = [](std::string_view parent, std::string_view child) {
    if (parent.empty() || child.size() <= parent.size()) return false;
    if (child.substr(0, parent.size()) != parent) return false;
    return parent.back() == '/' || child[parent.size()] == '/';
  };
  return below(a, b) || below(b, a);
}

namespace {

// The key scope of a call under `scope: user`: the face's scope and the
// user, length-prefixed, so two different (scope, user) pairs never share
// one ("a"+"bc" and "ab"+"c" differ). Choice: a leading '\x01' keeps it
// apart from the face scopes of `scope: global` (tenant names, credential
// digests), which never start with a control byte.
std::string UserScope(std::string_view scope, std::string_view user) {
  std::string s = "\x01user:";
  s += std::to_string(scope.size());
  s += ':';
  s += scope;
  s += std::to_string(user.size());
  s += ':';
  s += user;
  return s;
}

// The caller identity the policy groups by: the call's user, else its
// sharing scope.
std::string_view UserOf(const ToolCall& call) {
  return call.user.empty() ? call.scope : call.user;
}

}  // namespace

bool KeyScopeOf(std::string_view key_scope, std::string_view call_scope) {
  if (key_scope == call_scope) return true;
  // An MCP session's entries (serve's /mcp/<name>, src/mcp/session.cc): the
  // session's scope, then '\x1e' and its roots or '\x1f' and its envelope's
  // era. Session 19: /v1/invalidate's entriesDropped left them out. (A
  // tenant's name holds no control character: config.cc refuses one.)
  if (key_scope.size() > call_scope.size() &&
      key_scope.starts_with(call_scope) &&
      (key_scope[call_scope.size()] == '\x1e' ||
       key_scope[call_scope.size()] == '\x1f')) {
    return true;
  }
  // UserScope(call_scope, user) without the user: its length prefix ends
  // the call scope, so no other call scope's users share this prefix.
  std::string users = UserScope(call_scope, "");
  users.resize(users.size() - 2);  // the user's "0:"
  return key_scope.size() > users.size() && key_scope.starts_with(users);
}

std::string PublicScope(std::string_view group) {
  std::string s = "@public;";
  if (group.empty()) return s;
  s += std::to_string(group.size());
  s += ':';
  s += group;
  return s;
}

std::string VerdictMemo::KeyOf(std::string_view server, std::string_view tool,
                               std::string_view args) {
  std::string k;
  k.reserve(server.size() + tool.size() + args.size() + 2);
  k.append(server).push_back('\0');
  k.append(tool).push_back('\0');
  k.append(args);
  return k;
}

std::optional<Verdict> VerdictMemo::Find(std::string_view server,
                                         std::string_view tool,
                                         std::string_view args) const {
  if (args.size() > kMaxArgs) return std::nullopt;
  // Choice: the probe key is built in a per-thread buffer (no allocation
  // on the hit path; the map is keyed by std::string and searched by it).
  thread_local std::string k;
  k.clear();
  k.append(server).push_back('\0');
  k.append(tool).push_back('\0');
  k.append(args);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = verdicts_.find(k);
  if (it == verdicts_.end()) return std::nullopt;
  return it->second;
}

void VerdictMemo::Put(std::string_view server, std::string_view tool,
                      std::string_view args, const Verdict& v) {
  if (args.size() > kMaxArgs) return;
  std::string k = KeyOf(server, tool, args);
  std::lock_guard<std::mutex> lock(mu_);
  // Choice: starting over when full keeps the bound without per-entry
  // recency bookkeeping; a working set larger than the bound only pays
  // the classification it paid before the memo existed.
  if (verdicts_.size() >= kMaxEntries) verdicts_.clear();
  verdicts_.insert_or_assign(std::move(k), v);
}

CallPreparer::CallPreparer(const Config& config,
                           std::vector<std::unique_ptr<FeatureExtractor>> extra)
    : config_(config),
      deterministic_(extra.empty() && !config.classifier.llm),
      classifier_(config, ClassifierOptions{}, std::move(extra)),
      features_(config) {}

SharingScope CallPreparer::ScopeOf(std::string_view server) const {
  auto it = config_.servers.find(std::string(server));
  if (it != config_.servers.end() && it->second.scope) {
    return *it->second.scope;
  }
  return config_.scope;
}

PreparedCall CallPreparer::Prepare(const ToolCall& call,
                                   const ToolInfo* learned, bool read_resources,
                                   VerdictMemo* memo) const {
  PreparedCall p;
  // Choice: absent arguments and "arguments": null both mean "no
  // arguments", the same call as {} (MCP's arguments is an optional
  // object; some clients send null).
  std::string_view a = call.arguments_json;
  while (!a.empty() && IsJsonSpace(a.front())) a.remove_prefix(1);
  while (!a.empty() && IsJsonSpace(a.back())) a.remove_suffix(1);
  if (a.empty() || a == "null") a = "{}";
  p.args = a;
  // The one parse of the arguments (the key's canonicalizer), on first
  // need: the classifier's argument rules, the key and the features all
  // read it. A memoized COMMAND never needs it.
  std::optional<Result<CanonicalArguments>> parsed;
  auto read = [&]() -> const CanonicalArguments* {
    if (!parsed) parsed.emplace(CanonicalizeArguments(a));
    return parsed->ok() ? &**parsed : nullptr;
  };
  if (call.declared) {
    // The protocol, not the classifier, says the result is cacheable (an
    // MCP server's lists and resources/read, ToolCall::declared); its TTL
    // and sharing come with the result (ToolCache::Complete).
    p.verdict = Verdict{.cacheable = true,
                        .reason = VerdictReason::kDeclaredByServer,
                        .request_type = RequestType::kInformational,
                        .detail =
                            "cacheable by protocol; the server's "
                            "hints decide TTL and sharing"};
  } else if (std::optional<Verdict> known =
                 memo != nullptr && deterministic_
                     ? memo->Find(call.server, call.tool, a)
                     : std::nullopt) {
    p.verdict = std::move(*known);
  } else {
    const CanonicalArguments* view = read();
    if (learned != nullptr) {
      p.verdict = classifier_.ClassifyCall(*learned, a, view);
    } else {
      // Choice: a tool not (yet) learned from tools/list is classified
      // from its name alone (hard list, configuration, heuristic; unknown
      // = COMMAND).
      ToolInfo info;
      info.name = std::string(call.tool);
      info.server = std::string(call.server);
      p.verdict = classifier_.ClassifyCall(info, a, view);
    }
    if (memo != nullptr && deterministic_) {
      memo->Put(call.server, call.tool, a, p.verdict);
    }
  }
  if (!p.verdict.cacheable) {
    if (p.verdict.request_type == RequestType::kCommand) {
      p.resources = ResourceValues(a);
    }
    return p;
  }
  auto refuse = [&](VerdictReason reason, std::string detail, std::string name,
                    bool before_state) {
    p.refusal = KeyRefusal{.reason = reason,
                           .detail = std::move(detail),
                           .name = std::move(name),
                           .before_state = before_state};
  };
  if (call.task_augmented) {
    refuse(VerdictReason::kIncompleteResult, "task-augmented call",
           std::string(VerdictReasonName(VerdictReason::kIncompleteResult)),
           /*before_state=*/true);
    return p;
  }
  if (!call.declared && IsDeclaredMethodName(call.tool)) {
    refuse(VerdictReason::kReservedToolName,
           "an MCP method's result is cached only from the server's own "
           "answer on the MCP path",
           std::string(VerdictReasonName(VerdictReason::kReservedToolName)),
           /*before_state=*/false);
    return p;
  }
  std::string scope(call.scope);
  p.sharing = ScopeOf(call.server);
  if (p.sharing == SharingScope::kUser) {
    // Results depend on who asks: a call that names nobody can neither be
    // served another user's result nor leave its own for others.
    if (call.user.empty()) {
      refuse(VerdictReason::kUserRequired,
             "scope: user and the call names no user",
             std::string(VerdictReasonName(VerdictReason::kUserRequired)),
             /*before_state=*/false);
      return p;
    }
    scope = UserScope(call.scope, call.user);
  }
  if (read() == nullptr) {
    refuse(VerdictReason::kInvalidArguments, parsed->status().message(),
           std::string(VerdictReasonName(VerdictReason::kInvalidArguments)),
           /*before_state=*/false);
    return p;
  }
  CanonicalArguments& args = **parsed;
  p.user = std::string(UserOf(call));
  Result<RequestFeatures> feats =
      features_.Build({.server = call.server,
                       .tool = call.tool,
                       .arguments_json = args.canonical,
                       .parsed = &args,
                       .ttl_seconds = p.verdict.ttl_seconds});
  if (feats.ok()) {
    p.category = feats->category_feature;
    p.cost = feats->cost;
  }
  p.key = CacheKey{.scope = std::move(scope),
                   .server = std::string(call.server),
                   .tool = std::string(call.tool),
                   .canonical_args = std::move(args.canonical)};
  // A scan of the canonical text's top level, values copied only for
  // resource names.
  if (read_resources) p.resources = ResourceValues(p.key->canonical_args);
  return p;
}

}  // namespace toolcache::cache_internal
