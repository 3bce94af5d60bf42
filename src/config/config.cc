// YAML -> Config.
//
// Invariants:
// - Parsing never throws out of this file: yaml-cpp exceptions are caught and
//   turned into INVALID_ARGUMENT with "<source>:<line>: ..." (1-based lines).
// - Every key of every mapping is checked against a closed table for its
//   level; an unknown key is an error with a did-you-mean hint; a key given
//   twice in one mapping is an error naming both lines (YAML 1.2 requires
//   unique keys, and yaml-cpp would silently keep one of them).
// - Every value is type-checked; numbers must be finite and >= 0.
// - Values not in the file keep the defaults of config.h.
#include "toolcache/config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "src/config/size.h"

namespace toolcache {
namespace {

// Thrown inside this file only; caught in ParseConfig.
struct ConfigError {
  std::string message;
};

// Case-insensitive edit distance of `a` and `b` when it is at most
// `limit`, else limit + 1 (a row whose every cell exceeds `limit` ends it).
size_t EditDistanceWithin(std::string_view a, std::string_view b,
                          size_t limit) {
  if ((a.size() > b.size() ? a.size() - b.size() : b.size() - a.size()) >
      limit) {
    return limit + 1;
  }
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    size_t row_min = cur[0];
    for (size_t j = 1; j <= b.size(); ++j) {
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                        std::tolower(static_cast<unsigned char>(b[j - 1]));
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + !same});
      row_min = std::min(row_min, cur[j]);
    }
    if (row_min > limit) return limit + 1;
    std::swap(prev, cur);
  }
  return std::min(prev[b.size()], limit + 1);
}

// Closest key within a small edit distance, or "".
// Choice: suggest when at most max(2, len/3) edits away.
std::string_view Closest(std::string_view key,
                         const std::vector<std::string_view>& known) {
  const size_t limit = std::max<size_t>(2, key.size() / 3);
  std::string_view best;
  size_t best_d = limit + 1;
  for (std::string_view k : known) {
    const size_t d = EditDistanceWithin(key, k, limit);
    if (d < best_d) {
      best_d = d;
      best = k;
    }
  }
  return best;
}

class Parser {
 public:
  explicit Parser(std::string_view source) : source_(source) {}

  [[noreturn]] void Fail(const YAML::Node& at, const std::string& what) const {
    std::ostringstream os;
    os << source_;
    if (at.IsDefined() && at.Mark().line >= 0) os << ":" << at.Mark().line + 1;
    os << ": " << what;
    throw ConfigError{os.str()};
  }

  // Fails on the second occurrence of a key of map `node`.
  void CheckNoDuplicates(const YAML::Node& node, std::string_view where) const {
    std::map<std::string, int, std::less<>> seen;  // key -> 1-based line
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (!it->first.IsScalar()) continue;
      const std::string& key = it->first.Scalar();
      const int line = it->first.Mark().line + 1;
      auto [first, inserted] = seen.emplace(key, line);
      if (inserted) continue;
      std::string msg = "duplicate key '" + key + "'";
      if (!where.empty()) msg += " in " + std::string(where);
      msg += " (first given on line " + std::to_string(first->second) +
             "; keep one of them)";
      Fail(it->first, msg);
    }
  }

  // Checks every key of map `node` against `known` (and for duplicates).
  void CheckKeys(const YAML::Node& node, std::string_view where,
                 const std::vector<std::string_view>& known) const {
    CheckNoDuplicates(node, where);
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (!it->first.IsScalar()) Fail(it->first, "keys must be plain strings");
      const std::string& key = it->first.Scalar();
      if (std::find(known.begin(), known.end(), key) != known.end()) continue;
      std::string msg = "unknown key '" + key + "'";
      if (!where.empty()) msg += " in " + std::string(where);
      std::string_view hint = Closest(key, known);
      if (!hint.empty()) {
        msg += " (did you mean '" + std::string(hint) + "'?)";
      } else {
        msg += " (known keys:";
        for (std::string_view k : known) msg += " " + std::string(k);
        msg += ")";
      }
      Fail(it->first, msg);
    }
  }

  void ExpectMap(const YAML::Node& node, std::string_view key) const {
    if (!node.IsMap()) {
      Fail(node, "'" + std::string(key) +
                     "' must be a mapping (key: value lines), got " +
                     Describe(node));
    }
    CheckNoDuplicates(node, key);
  }

  static std::string Describe(const YAML::Node& node) {
    if (node.IsSequence()) return "a list";
    if (node.IsMap()) return "a mapping";
    if (node.IsNull()) return "nothing";
    return "'" + node.Scalar() + "'";
  }

  double Number(const YAML::Node& node, std::string_view key) const {
    if (!node.IsScalar()) {
      Fail(node, "'" + std::string(key) + "' must be a number, got " +
                     Describe(node));
    }
    const std::string& s = node.Scalar();
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size() || errno != 0 ||
        !std::isfinite(v)) {
      Fail(node,
           "'" + std::string(key) + "' must be a number, got '" + s + "'");
    }
    if (v < 0) {
      Fail(node, "'" + std::string(key) + "' must be >= 0, got " + s);
    }
    return v;
  }

  uint64_t Count(const YAML::Node& node, std::string_view key) const {
    const double v = Number(node, key);
    if (v != std::floor(v) || v > 9.0e18) {
      Fail(node, "'" + std::string(key) + "' must be a whole number, got '" +
                     node.Scalar() + "'");
    }
    return static_cast<uint64_t>(v);
  }

  // A size in the one grammar of src/config/size.h ("67108864", "64MiB").
  uint64_t Bytes(const YAML::Node& node, std::string_view key) const {
    if (!node.IsScalar()) {
      Fail(node,
           "'" + std::string(key) + "' must be a size, got " + Describe(node));
    }
    Result<uint64_t> bytes = config::ParseSize(node.Scalar());
    if (!bytes.ok()) {
      Fail(node, "'" + std::string(key) + "' " + bytes.status().message());
    }
    return *bytes;
  }

  bool Bool(const YAML::Node& node, std::string_view key) const {
    if (node.IsScalar()) {
      std::string s = node.Scalar();
      std::transform(s.begin(), s.end(), s.begin(),
                     [](unsigned char c) { return std::tolower(c); });
      if (s == "true") return true;
      if (s == "false") return false;
    }
    Fail(node, "'" + std::string(key) + "' must be true or false, got " +
                   Describe(node));
  }

  std::string String(const YAML::Node& node, std::string_view key) const {
    if (!node.IsScalar() || node.Scalar().empty()) {
      Fail(node, "'" + std::string(key) + "' must be a non-empty string, got " +
                     Describe(node));
    }
    return node.Scalar();
  }

  template <typename E>
  E Enum(const YAML::Node& node, std::string_view key,
         const std::vector<std::pair<std::string_view, E>>& values) const {
    if (node.IsScalar()) {
      for (const auto& [name, v] : values) {
        if (node.Scalar() == name) return v;
      }
    }
    std::string msg = "'" + std::string(key) + "' must be one of";
    for (const auto& [name, v] : values) msg += " " + std::string(name);
    msg += ", got " + Describe(node);
    if (node.IsScalar()) {
      std::vector<std::string_view> names;
      for (const auto& [name, v] : values) names.push_back(name);
      std::string_view hint = Closest(node.Scalar(), names);
      if (!hint.empty()) msg += " (did you mean '" + std::string(hint) + "'?)";
    }
    Fail(node, msg);
  }

  std::vector<std::string> ToolList(const YAML::Node& node,
                                    std::string_view key) const {
    if (node.IsNull()) return {};
    if (!node.IsSequence()) {
      Fail(node, "'" + std::string(key) +
                     "' must be a list of tool names, got " + Describe(node));
    }
    std::vector<std::string> out;
    for (const YAML::Node& item : node) out.push_back(String(item, key));
    return out;
  }

  TtlMap TtlTable(const YAML::Node& node, std::string_view key) const {
    TtlMap out;
    if (node.IsNull()) return out;
    ExpectMap(node, key);
    for (auto it = node.begin(); it != node.end(); ++it) {
      const std::string tool = String(it->first, key);
      out[tool] = Number(it->second, std::string(key) + "." + tool);
    }
    return out;
  }

  ToolConfig Tool(const YAML::Node& node, const std::string& name) const {
    ToolConfig t;
    if (node.IsNull()) return t;
    ExpectMap(node, "tools." + name);
    CheckKeys(node, "tools." + name,
              {"requestType", "ttlSeconds", "parameterCategory", "cost"});
    if (const YAML::Node n = node["requestType"]) {
      t.request_type =
          Enum<RequestType>(n, "requestType",
                            {{"INFORMATIONAL", RequestType::kInformational},
                             {"COMMAND", RequestType::kCommand}});
    }
    if (const YAML::Node n = node["ttlSeconds"]) {
      t.ttl_seconds = Number(n, "tools." + name + ".ttlSeconds");
    }
    if (const YAML::Node n = node["parameterCategory"]) {
      if (!n.IsScalar()) {
        Fail(n, "'parameterCategory' must be an argument name (or \"\"), got " +
                    Describe(n));
      }
      t.parameter_category = n.Scalar();
    }
    if (const YAML::Node n = node["cost"]) {
      t.cost = Number(n, "tools." + name + ".cost");
    }
    return t;
  }

  ToolConfigMap Tools(const YAML::Node& node, std::string_view key) const {
    ToolConfigMap out;
    if (node.IsNull()) return out;
    ExpectMap(node, key);
    for (auto it = node.begin(); it != node.end(); ++it) {
      const std::string name = String(it->first, key);
      out[name] = Tool(it->second, name);
    }
    return out;
  }

  ServerConfig Server(const YAML::Node& node, const std::string& name) const {
    ServerConfig s;
    if (node.IsNull()) return s;
    ExpectMap(node, "servers." + name);
    CheckKeys(node, "servers." + name,
              {"trustAnnotations", "ttlSeconds", "excludeTools", "perToolTtl",
               "tools", "url", "headers", "command", "scope",
               "shareAcrossCredentials", "credentialEnv"});
    if (const YAML::Node n = node["trustAnnotations"]) {
      s.trust_annotations = Bool(n, "trustAnnotations");
    }
    if (const YAML::Node n = node["ttlSeconds"]) {
      s.ttl_seconds = Number(n, "ttlSeconds");
    }
    if (const YAML::Node n = node["excludeTools"]) {
      s.exclude_tools = ToolList(n, "excludeTools");
    }
    if (const YAML::Node n = node["perToolTtl"]) {
      s.per_tool_ttl = TtlTable(n, "perToolTtl");
    }
    if (const YAML::Node n = node["tools"]) s.tools = Tools(n, "tools");
    if (const YAML::Node n = node["scope"]) {
      s.scope = Enum<SharingScope>(
          n, "servers." + name + ".scope",
          {{"global", SharingScope::kGlobal}, {"user", SharingScope::kUser}});
    }
    if (const YAML::Node n = node["url"]) {
      s.url = String(n, "servers." + name + ".url");
    }
    if (const YAML::Node n = node["headers"]) {
      const std::string where = "servers." + name + ".headers";
      ExpectMap(n, where);
      for (auto it = n.begin(); it != n.end(); ++it) {
        s.headers.emplace_back(String(it->first, where),
                               String(it->second, where));
      }
    }
    if (const YAML::Node n = node["shareAcrossCredentials"]) {
      s.share_across_credentials = Bool(n, "shareAcrossCredentials");
    }
    if (const YAML::Node n = node["credentialEnv"]) {
      const std::string key = "servers." + name + ".credentialEnv";
      if (!n.IsSequence()) {
        Fail(n, "'" + key +
                    "' must be a list of environment variable names, "
                    "got " +
                    Describe(n));
      }
      for (const YAML::Node& item : n) {
        s.credential_env.push_back(String(item, key));
      }
    }
    if (const YAML::Node n = node["command"]) {
      const std::string key = "servers." + name + ".command";
      if (!n.IsSequence() || n.size() == 0) {
        Fail(n, "'" + key + "' must be a non-empty list (argv), got " +
                    Describe(n));
      }
      for (const YAML::Node& item : n) s.command.push_back(String(item, key));
      if (s.url) {
        Fail(n, "'servers." + name +
                    "' has both 'url' and 'command': a server is either remote "
                    "or a child process");
      }
    }
    return s;
  }

  ProxyConfig Proxy(const YAML::Node& node) const {
    ProxyConfig p;
    if (node.IsNull()) return p;
    ExpectMap(node, "proxy");
    CheckKeys(node, "proxy",
              {"upstream",
               "anthropicUpstream",
               "openaiUpstream",
               "scope",
               "clientName",
               "maxBodyBytes",
               "maxDepth",
               "responseTimeoutSeconds",
               "caFile",
               "serve",
               "serveMaxRounds",
               "conversationTtlSeconds",
               "offload",
               "offloadTokens",
               "drainTimeoutSeconds",
               "allowedHosts",
               "allowedOrigins",
               "credentialHeaders",
               "credentialQuery",
               "adminTokenEnv"});
    if (const YAML::Node n = node["adminTokenEnv"]) {
      p.admin_token_env = String(n, "proxy.adminTokenEnv");
      p.admin_token_env_line = n.Mark().line + 1;
    }
    if (const YAML::Node n = node["credentialHeaders"]) {
      p.credential_headers = ToolList(n, "proxy.credentialHeaders");
      for (const std::string& h : p.credential_headers) {
        if (h.empty() || h.find_first_of(": \t") != std::string::npos) {
          Fail(n, "'proxy.credentialHeaders' holds '" + h +
                      "', not a header name");
        }
      }
    }
    if (const YAML::Node n = node["credentialQuery"]) {
      p.credential_query = ToolList(n, "proxy.credentialQuery");
      for (const std::string& q : p.credential_query) {
        if (q.empty() || q.find_first_of("?&=# \t") != std::string::npos) {
          Fail(n, "'proxy.credentialQuery' holds '" + q +
                      "', not a query parameter name");
        }
      }
    }
    if (const YAML::Node n = node["allowedHosts"]) {
      p.allowed_hosts = ToolList(n, "proxy.allowedHosts");
    }
    if (const YAML::Node n = node["allowedOrigins"]) {
      p.allowed_origins = ToolList(n, "proxy.allowedOrigins");
    }
    if (const YAML::Node n = node["upstream"]) {
      p.upstream = String(n, "proxy.upstream");
    }
    if (const YAML::Node n = node["anthropicUpstream"]) {
      p.anthropic_upstream = String(n, "proxy.anthropicUpstream");
    }
    if (const YAML::Node n = node["openaiUpstream"]) {
      p.openai_upstream = String(n, "proxy.openaiUpstream");
    }
    if (const YAML::Node n = node["scope"]) {
      p.scope = Enum<std::string>(
          n, "proxy.scope",
          {{"credential", "credential"}, {"global", "global"}});
    }
    if (const YAML::Node n = node["clientName"]) {
      p.client_name = String(n, "proxy.clientName");
    }
    if (const YAML::Node n = node["maxBodyBytes"]) {
      p.max_body_bytes = Bytes(n, "proxy.maxBodyBytes");
    }
    if (const YAML::Node n = node["maxDepth"]) {
      p.max_depth = Count(n, "proxy.maxDepth");
    }
    if (const YAML::Node n = node["responseTimeoutSeconds"]) {
      p.response_timeout_seconds = Number(n, "proxy.responseTimeoutSeconds");
    }
    if (const YAML::Node n = node["caFile"]) {
      p.ca_file = String(n, "proxy.caFile");
    }
    if (const YAML::Node n = node["drainTimeoutSeconds"]) {
      p.drain_timeout_seconds = Number(n, "proxy.drainTimeoutSeconds");
      if (*p.drain_timeout_seconds < 0) {
        Fail(n, "'proxy.drainTimeoutSeconds' must be >= 0");
      }
    }
    if (const YAML::Node n = node["serve"]) {
      // true / false, or the list of tools to serve.
      if (n.IsSequence()) {
        p.serve_tools = ToolList(n, "proxy.serve");
      } else {
        p.serve = Bool(n, "proxy.serve");
      }
    }
    if (const YAML::Node n = node["serveMaxRounds"]) {
      p.serve_max_rounds = Count(n, "proxy.serveMaxRounds");
      if (*p.serve_max_rounds < 1 || *p.serve_max_rounds > 64) {
        Fail(n, "'proxy.serveMaxRounds' must be 1 to 64");
      }
    }
    if (const YAML::Node n = node["offload"]) {
      p.offload = Bool(n, "proxy.offload");
    }
    if (const YAML::Node n = node["offloadTokens"]) {
      p.offload_tokens = Count(n, "proxy.offloadTokens");
      if (*p.offload_tokens < 1) Fail(n, "'proxy.offloadTokens' must be >= 1");
    }
    if (const YAML::Node n = node["conversationTtlSeconds"]) {
      p.conversation_ttl_seconds = Number(n, "proxy.conversationTtlSeconds");
      if (*p.conversation_ttl_seconds <= 0) {
        Fail(n, "'proxy.conversationTtlSeconds' must be > 0");
      }
    }
    return p;
  }

  ClassifierConfig ClassifierBlock(const YAML::Node& node) const {
    ClassifierConfig c;
    if (node.IsNull()) return c;
    ExpectMap(node, "classifier");
    CheckKeys(node, "classifier", {"llm"});
    const YAML::Node n = node["llm"];
    if (!n || n.IsNull()) return c;
    ExpectMap(n, "classifier.llm");
    CheckKeys(
        n, "classifier.llm",
        {"url", "api", "model", "apiKeyEnv", "mayRelax", "timeoutSeconds"});
    LlmExtractorConfig l;
    l.line = n.Mark().line + 1;
    if (const YAML::Node v = n["url"]) l.url = String(v, "classifier.llm.url");
    if (l.url.empty()) {
      Fail(n,
           "'classifier.llm' needs 'url' (the provider's origin, e.g. "
           "https://api.anthropic.com)");
    }
    if (const YAML::Node v = n["api"]) {
      l.api =
          Enum<std::string>(v, "classifier.llm.api",
                            {{"anthropic", "anthropic"}, {"openai", "openai"}});
    }
    if (const YAML::Node v = n["model"]) {
      l.model = String(v, "classifier.llm.model");
    }
    if (l.model.empty()) Fail(n, "'classifier.llm' needs 'model'");
    if (const YAML::Node v = n["apiKeyEnv"]) {
      l.api_key_env = String(v, "classifier.llm.apiKeyEnv");
    }
    if (const YAML::Node v = n["mayRelax"]) {
      l.may_relax = Bool(v, "classifier.llm.mayRelax");
    }
    if (const YAML::Node v = n["timeoutSeconds"]) {
      l.timeout_seconds = Number(v, "classifier.llm.timeoutSeconds");
      if (l.timeout_seconds <= 0 || l.timeout_seconds > 600) {
        Fail(v, "'classifier.llm.timeoutSeconds' must be in (0, 600]");
      }
    }
    c.llm = std::move(l);
    return c;
  }

  ServeConfig Serve(const YAML::Node& node) const {
    ServeConfig p;
    if (node.IsNull()) return p;
    ExpectMap(node, "serve");
    CheckKeys(
        node, "serve",
        {"listen", "tenants", "maxWaitSeconds", "leaseSeconds",
         "maxOpenTickets", "allowedOrigins", "allowedHosts", "adminTokenEnv"});
    if (const YAML::Node n = node["adminTokenEnv"]) {
      p.admin_token_env = String(n, "serve.adminTokenEnv");
      p.admin_token_env_line = n.Mark().line + 1;
    }
    if (const YAML::Node n = node["allowedHosts"]) {
      p.allowed_hosts = ToolList(n, "serve.allowedHosts");
    }
    if (const YAML::Node n = node["listen"]) {
      p.listen = String(n, "serve.listen");
    }
    if (const YAML::Node n = node["maxWaitSeconds"]) {
      p.max_wait_seconds = Number(n, "serve.maxWaitSeconds");
    }
    if (const YAML::Node n = node["leaseSeconds"]) {
      p.lease_seconds = Number(n, "serve.leaseSeconds");
    }
    if (const YAML::Node n = node["maxOpenTickets"]) {
      p.max_open_tickets = Count(n, "serve.maxOpenTickets");
      if (*p.max_open_tickets == 0) {
        Fail(n, "'serve.maxOpenTickets' must be >= 1, got 0");
      }
    }
    if (const YAML::Node n = node["allowedOrigins"]) {
      p.allowed_origins = ToolList(n, "serve.allowedOrigins");
    }
    if (const YAML::Node n = node["tenants"]) {
      if (!n.IsNull()) {
        ExpectMap(n, "serve.tenants");
        for (auto it = n.begin(); it != n.end(); ++it) {
          ServeTenant t;
          t.name = String(it->first, "serve.tenants");
          t.line = it->first.Mark().line + 1;
          // A tenant's name is its cache scope: a leading '@' is reserved
          // for the scopes toolcache composes (credential principals, the
          // public scope), which a tenant must never share.
          if (!t.name.empty() && t.name[0] == '@') {
            Fail(it->first, "tenant name '" + t.name +
                                "' starts with '@', which is reserved for "
                                "the cache scopes toolcache composes");
          }
          const std::string where = "serve.tenants." + t.name;
          // The name is the tenant's cache scope; an MCP session's scopes
          // extend it after a control character (KeyScopeOf, prepare.h).
          for (const char ch : t.name) {
            if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) {
              Fail(it->first,
                   "tenant name '" + t.name + "' holds a control character");
            }
          }
          ExpectMap(it->second, where);
          CheckKeys(it->second, where, {"token", "tokenEnv"});
          if (const YAML::Node v = it->second["token"]) {
            t.token = String(v, where + ".token");
          }
          if (const YAML::Node v = it->second["tokenEnv"]) {
            t.token_env = String(v, where + ".tokenEnv");
          }
          if (t.token.empty() == t.token_env.empty()) {
            Fail(it->second, "'" + where +
                                 "' needs exactly one of 'token' and "
                                 "'tokenEnv'");
          }
          // The token decides the tenant (its cache scope): two tenants
          // with one token would silently be one (the token is not shown).
          for (const ServeTenant& other : p.tenants) {
            if (other.name == t.name) {
              Fail(it->first, "tenant '" + t.name + "' is listed twice");
            }
            if ((!t.token.empty() && other.token == t.token) ||
                (!t.token_env.empty() && other.token_env == t.token_env)) {
              Fail(it->second, "tenants '" + other.name + "' and '" + t.name +
                                   "' have the same " +
                                   (t.token.empty() ? "tokenEnv" : "token") +
                                   "; each tenant needs its own");
            }
          }
          p.tenants.push_back(std::move(t));
        }
      }
    }
    return p;
  }

  PromptCacheConfig PromptCache(const YAML::Node& node) const {
    PromptCacheConfig p;
    if (node.IsNull()) return p;
    ExpectMap(node, "promptCache");
    CheckKeys(
        node, "promptCache",
        {"stabilizeTools", "placeCacheControl", "cacheSystem", "cacheLastTurn",
         "ttl", "minCacheableTokens", "detectBreaks", "breakMinTokens",
         "breakMinFraction", "ttlSeconds", "keepBreaks", "maxConversations"});
    auto flag = [&](const char* key, std::optional<bool>* out) {
      if (const YAML::Node n = node[key]) {
        *out = Bool(n, std::string("promptCache.") + key);
      }
    };
    flag("stabilizeTools", &p.stabilize_tools);
    flag("placeCacheControl", &p.place_cache_control);
    flag("cacheSystem", &p.cache_system);
    flag("cacheLastTurn", &p.cache_last_turn);
    flag("detectBreaks", &p.detect_breaks);
    if (const YAML::Node n = node["ttl"]) {
      p.ttl =
          Enum<std::string>(n, "promptCache.ttl", {{"5m", "5m"}, {"1h", "1h"}});
    }
    if (const YAML::Node n = node["minCacheableTokens"]) {
      p.min_cacheable_tokens = Count(n, "promptCache.minCacheableTokens");
    }
    if (const YAML::Node n = node["breakMinTokens"]) {
      p.break_min_tokens = Count(n, "promptCache.breakMinTokens");
    }
    if (const YAML::Node n = node["breakMinFraction"]) {
      p.break_min_fraction = Number(n, "promptCache.breakMinFraction");
      if (*p.break_min_fraction < 0 || *p.break_min_fraction >= 1) {
        Fail(n, "'promptCache.breakMinFraction' must be in [0, 1)");
      }
    }
    if (const YAML::Node n = node["ttlSeconds"]) {
      p.ttl_seconds = Number(n, "promptCache.ttlSeconds");
    }
    if (const YAML::Node n = node["keepBreaks"]) {
      p.keep_breaks = Count(n, "promptCache.keepBreaks");
    }
    if (const YAML::Node n = node["maxConversations"]) {
      p.max_conversations = Count(n, "promptCache.maxConversations");
      if (*p.max_conversations == 0) {
        Fail(n, "'promptCache.maxConversations' must be > 0");
      }
    }
    return p;
  }

  Config Top(YAML::Node root) const {
    Config c;
    c.source = std::string(source_);
    if (!root || root.IsNull()) return c;
    if (!root.IsMap()) {
      Fail(root, "the configuration must be a mapping of keys, got " +
                     Describe(root));
    }
    // Choice: accept the seed module's `tool-cache:` wrapper as-is.
    if (root.size() == 1) {
      for (std::string_view wrapper : {"tool-cache", "toolCache"}) {
        if (YAML::Node inner = root[std::string(wrapper)]) {
          return Top(inner);
        }
      }
    }
    CheckKeys(
        root, "",
        {"capacityBytes", "maxEntries", "policy", "policyParams", "ttlSeconds",
         "minCacheableTtlSeconds", "excludeTools", "perToolTtl",
         "trustAnnotations", "invalidation", "scope", "tools", "servers",
         "store", "proxy", "serve", "promptCache", "classifier"});
    if (const YAML::Node n = root["capacityBytes"]) {
      c.capacity_bytes = Bytes(n, "capacityBytes");
      if (c.capacity_bytes == 0) {
        Fail(n,
             "'capacityBytes' must be > 0: a cache of 0 bytes stores "
             "nothing (to forward without caching, run `toolcache mcp "
             "--no-cache`; otherwise give a size such as \"64MiB\")");
      }
    }
    if (const YAML::Node n = root["maxEntries"]) {
      c.max_entries = Count(n, "maxEntries");
    }
    if (const YAML::Node n = root["policy"]) {
      c.policy = String(n, "policy");
      c.policy_line = n.Mark().line + 1;
    }
    if (const YAML::Node n = root["policyParams"]) {
      if (!n.IsNull()) {
        ExpectMap(n, "policyParams");
        for (auto it = n.begin(); it != n.end(); ++it) {
          const std::string knob = String(it->first, "policyParams");
          if (!it->second.IsScalar()) {
            Fail(it->second, "'policyParams." + knob + "' must be a number");
          }
          char* end = nullptr;
          const std::string& s = it->second.Scalar();
          const double v = std::strtod(s.c_str(), &end);
          if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v)) {
            Fail(it->second, "'policyParams." + knob +
                                 "' must be a number, got '" + s + "'");
          }
          c.policy_params[knob] = v;
          c.policy_param_lines[knob] = it->first.Mark().line + 1;
        }
      }
    }
    if (const YAML::Node n = root["ttlSeconds"]) {
      c.ttl_seconds = Number(n, "ttlSeconds");
    }
    if (const YAML::Node n = root["minCacheableTtlSeconds"]) {
      c.min_cacheable_ttl_seconds = Number(n, "minCacheableTtlSeconds");
    }
    if (const YAML::Node n = root["excludeTools"]) {
      c.exclude_tools = ToolList(n, "excludeTools");
    }
    if (const YAML::Node n = root["perToolTtl"]) {
      c.per_tool_ttl = TtlTable(n, "perToolTtl");
    }
    if (const YAML::Node n = root["trustAnnotations"]) {
      c.trust_annotations = Bool(n, "trustAnnotations");
    }
    if (const YAML::Node n = root["invalidation"]) {
      c.invalidation =
          Enum<InvalidationScope>(n, "invalidation",
                                  {{"server", InvalidationScope::kServer},
                                   {"resource", InvalidationScope::kResource}});
    }
    if (const YAML::Node n = root["scope"]) {
      c.scope = Enum<SharingScope>(
          n, "scope",
          {{"global", SharingScope::kGlobal}, {"user", SharingScope::kUser}});
    }
    if (const YAML::Node n = root["tools"]) c.tools = Tools(n, "tools");
    if (const YAML::Node n = root["store"]) {
      // The spec itself is checked where the store is opened (OpenStore),
      // with `store_line` pointing here.
      c.store = String(n, "store");
      c.store_line = n.Mark().line + 1;
    }
    if (const YAML::Node n = root["proxy"]) c.proxy = Proxy(n);
    if (const YAML::Node n = root["serve"]) c.serve = Serve(n);
    if (const YAML::Node n = root["promptCache"]) {
      c.prompt_cache = PromptCache(n);
    }
    if (const YAML::Node n = root["classifier"]) {
      c.classifier = ClassifierBlock(n);
    }
    if (const YAML::Node n = root["servers"]) {
      if (!n.IsNull()) {
        ExpectMap(n, "servers");
        for (auto it = n.begin(); it != n.end(); ++it) {
          const std::string name = String(it->first, "servers");
          c.servers[name] = Server(it->second, name);
        }
      }
    }
    return c;
  }

 private:
  std::string_view source_;
};

}  // namespace

Result<Config> ParseConfig(std::string_view text,
                           std::string_view source_name) {
  Parser parser(source_name);
  try {
    YAML::Node root = YAML::Load(std::string(text));
    return parser.Top(root);
  } catch (const ConfigError& e) {
    return InvalidArgument(e.message);
  } catch (const YAML::Exception& e) {
    std::ostringstream os;
    os << source_name;
    if (e.mark.line >= 0) os << ":" << e.mark.line + 1;
    os << ": invalid YAML: " << e.msg;
    return InvalidArgument(os.str());
  } catch (const std::exception& e) {
    return InvalidArgument(std::string(source_name) + ": " + e.what());
  }
}

Result<Config> LoadConfigFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return InvalidArgument("cannot read configuration file '" + path +
                           "': is a directory");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot read configuration file '" + path + "'");
  // Choice: a configuration is a few KB; reading stops past kMaxConfigBytes
  // so a wrong path (/dev/zero, a huge log) fails fast instead of filling
  // memory.
  constexpr size_t kMaxConfigBytes = 4 << 20;
  std::string text;
  char buf[1 << 16];
  while (text.size() <= kMaxConfigBytes &&
         (in.read(buf, sizeof(buf)) || in.gcount() > 0)) {
    text.append(buf, static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) {
    return NotFound("error reading configuration file '" + path + "'");
  }
  if (text.size() > kMaxConfigBytes) {
    return InvalidArgument("configuration file '" + path +
                           "' is larger than 4 MiB; is it the right file?");
  }
  return ParseConfig(text, path);
}

Status CheckPolicyConfig(const Config& config,
                         std::span<const PolicyInfo> policies,
                         bool online_only) {
  auto where = [&](int32_t line) {
    std::string w = config.source;
    if (line > 0) w += ":" + std::to_string(line);
    return w + ": ";
  };
  const PolicyInfo* row = nullptr;
  std::vector<std::string_view> names;
  for (const PolicyInfo& p : policies) {
    if (online_only && p.kind != PolicyKind::kOnline) continue;
    names.push_back(p.name);
    if (p.name == config.policy) row = &p;
  }
  std::string known;
  for (std::string_view n : names) {
    if (!known.empty()) known += ", ";
    known += n;
  }
  if (row == nullptr) {
    const bool offline = std::any_of(
        policies.begin(), policies.end(),
        [&](const PolicyInfo& p) { return p.name == config.policy; });
    std::string msg = where(config.policy_line);
    if (offline) {
      msg += "policy '" + config.policy +
             "' is a simulator limit (it needs the future or unbounded "
             "memory) and cannot run in a live cache";
    } else {
      msg += "unknown policy '" + config.policy + "'";
      std::string_view hint = Closest(config.policy, names);
      if (!hint.empty()) msg += " (did you mean '" + std::string(hint) + "'?)";
    }
    return InvalidArgument(msg + "; usable policies: " + known);
  }
  for (const auto& entry : config.policy_params) {
    const std::string& knob = entry.first;
    const auto line = config.policy_param_lines.find(knob);
    const std::string at =
        where(line == config.policy_param_lines.end() ? config.policy_line
                                                      : line->second);
    if (const std::optional<KnobSpec> spec = FindKnob(*row, knob)) {
      if (entry.second >= spec->lo && entry.second <= spec->hi) continue;
      std::ostringstream range;
      range << "[" << spec->lo << ", " << spec->hi << "]";
      return InvalidArgument(at + "policy '" + config.policy + "': knob '" +
                             knob + "' is outside its range " + range.str());
    }
    std::string msg =
        at + "policy '" + config.policy + "' has no knob '" + knob + "'";
    std::string_view hint = Closest(knob, KnobNames(*row));
    if (!hint.empty()) msg += " (did you mean '" + std::string(hint) + "'?)";
    msg += "; its knobs: ";
    msg += row->knobs.empty() ? std::string("(none)") : std::string(row->knobs);
    return InvalidArgument(msg);
  }
  return Status::Ok();
}

std::string_view InvalidationScopeName(InvalidationScope scope) {
  return scope == InvalidationScope::kServer ? "server" : "resource";
}

std::string_view SharingScopeName(SharingScope scope) {
  return scope == SharingScope::kGlobal ? "global" : "user";
}

}  // namespace toolcache
