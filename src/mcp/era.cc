// Invariants:
// - ReadRequestEra never reads requestState or inputResponses beyond their
//   presence: they are the client's (untrusted) echo of server state.
// - key_material and envelope_members are set only for a claim whose
//   envelope passed every check, so nothing built from an envelope a server
//   rejects can be cached or sent.
// Choice: the envelope checks are those of the TypeScript SDK 2.4.0 server
// (RequestMetaEnvelopeSchema: protocolVersion a string, clientCapabilities
// an object whose experimental / sampling / elicitation / roots /
// extensions members are objects, clientInfo an object with string name and
// version, logLevel a syslog level, progressToken a string or number), plus
// the revision being 2026-07-28: a revision this proxy does not know may
// change what a result depends on, so it is never cached.
#include "src/mcp/era.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "src/mcp/json_scan.h"
#include "toolcache/tool_cache.h"

namespace toolcache::mcp {
namespace {

using nlohmann::json;

// A JSON string literal of `s`; invalid UTF-8 becomes U+FFFD (dump would
// throw otherwise: no exception on the request path).
std::string JsonName(std::string_view s) {
  return json(std::string(s))
      .dump(-1, ' ', false, json::error_handler_t::replace);
}

// Why the envelope `meta` (a parsed _meta object) would be rejected, or "".
std::string EnvelopeProblem(const json& meta) {
  const auto version = meta.find(std::string(kProtocolVersionMetaKey));
  if (!version->is_string()) return "protocolVersion is not a string";
  if (version->get<std::string>() != kModernProtocolVersion) {
    return "unsupported protocol version " + version->dump();
  }
  const auto caps = meta.find(std::string(kClientCapabilitiesMetaKey));
  if (caps == meta.end()) return "clientCapabilities is missing";
  if (!caps->is_object()) return "clientCapabilities is not an object";
  for (const char* member :
       {"experimental", "sampling", "elicitation", "roots", "extensions"}) {
    const auto m = caps->find(member);
    if (m != caps->end() && !m->is_object()) {
      return std::string("clientCapabilities.") + member + " is not an object";
    }
  }
  if (const auto info = meta.find(std::string(kClientInfoMetaKey));
      info != meta.end()) {
    if (!info->is_object() || !info->contains("name") ||
        !(*info)["name"].is_string() || !info->contains("version") ||
        !(*info)["version"].is_string()) {
      return "clientInfo is not an implementation {name, version}";
    }
  }
  if (const auto level = meta.find(std::string(kLogLevelMetaKey));
      level != meta.end()) {
    static constexpr std::array<std::string_view, 8> kLevels = {
        "debug", "info",     "notice", "warning",
        "error", "critical", "alert",  "emergency"};
    bool known = false;
    if (level->is_string()) {
      const std::string l = level->get<std::string>();
      for (std::string_view k : kLevels) known = known || l == k;
    }
    if (!known) return "logLevel is not a logging level";
  }
  if (const auto token = meta.find("progressToken"); token != meta.end()) {
    if (!token->is_string() && !token->is_number()) {
      return "progressToken is not a string or number";
    }
  }
  return {};
}

}  // namespace

std::string_view EraName(Era era) {
  switch (era) {
    case Era::kUnknown:
      return "unknown";
    case Era::kLegacy:
      return "2025";
    case Era::kModern:
      return "2026-07-28";
  }
  return "unknown";
}

bool IsModernProtocolVersion(std::string_view version) {
  // Revisions are dates, YYYY-MM-DD: only a date compares as one
  // ("draft", "latest" or "9" sort after "2026-07-28" as text).
  if (version.size() != 10 || version[4] != '-' || version[7] != '-') {
    return false;
  }
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9}) {
    if (version[i] < '0' || version[i] > '9') return false;
  }
  return version >= kModernProtocolVersion;
}

RequestEra ReadRequestEra(std::string_view params, bool with_params) {
  RequestEra e;
  if (params.empty()) {
    e.params_without_meta = "{}";
    return e;
  }
  if (params.front() != '{') return e;
  std::string_view meta_span;
  std::string rest = "{";
  ForEachMember(params, [&](const std::string& name, std::string_view value) {
    if (name == "_meta") {
      meta_span = value;
      return;
    }
    if (name == "inputResponses" || name == "requestState") {
      e.retry = true;
      return;
    }
    if (!with_params) return;
    if (rest.size() > 1) rest += ',';
    rest += JsonName(name);
    rest += ':';
    rest.append(value);
  });
  rest += '}';
  if (with_params) e.params_without_meta = std::move(rest);
  if (meta_span.empty() || meta_span.front() != '{') return e;
  if (FindMember(meta_span, kProtocolVersionMetaKey).empty()) return e;
  e.claim = true;
  const json meta = json::parse(meta_span, nullptr, /*allow_exceptions=*/false);
  if (!meta.is_object()) {
    e.problem = "_meta is not a JSON object";
    return e;
  }
  if (const auto v = meta.find(std::string(kProtocolVersionMetaKey));
      v->is_string()) {
    e.protocol_version = v->get<std::string>();
  }
  e.problem = EnvelopeProblem(meta);
  if (!e.problem.empty()) return e;
  // nlohmann's object keeps members sorted: a canonical text.
  json key = json::object();
  key["protocolVersion"] = e.protocol_version;
  key["clientCapabilities"] = meta[std::string(kClientCapabilitiesMetaKey)];
  e.key_material = key.dump();
  for (std::string_view k : {kProtocolVersionMetaKey,
                             kClientCapabilitiesMetaKey, kClientInfoMetaKey}) {
    const std::string_view v = FindMember(meta_span, k);
    if (v.empty()) continue;
    if (!e.envelope_members.empty()) e.envelope_members += ',';
    e.envelope_members += JsonName(k);
    e.envelope_members += ':';
    e.envelope_members.append(v);
  }
  return e;
}

bool IsCacheableResultMethod(std::string_view method) {
  // One list for both sides: the engine keeps these names' key space for
  // declared calls (tool_cache.h).
  return IsDeclaredMethodName(method);
}

CacheHints ReadCacheHints(std::string_view result) {
  CacheHints h;
  if (result.empty() || result.front() != '{') return h;
  ForEachMember(result, [&](const std::string& name, std::string_view value) {
    if (name == "resultType") {
      h.result_type_present = true;
      h.result_type = DecodeString(value);
    } else if (name == "ttlMs") {
      // A non-negative integer literal (no fraction, exponent or sign).
      bool digits = !value.empty() && value.size() <= 15;
      for (char c : value) digits = digits && c >= '0' && c <= '9';
      if (digits) {
        h.has_ttl = true;
        h.ttl_seconds =
            std::min(std::stod(std::string(value)), kMaxCacheTtlMs) / 1000.0;
      }
    } else if (name == "cacheScope") {
      const std::string scope = DecodeString(value);
      h.has_scope = scope == "public" || scope == "private";
      h.shared = scope == "public";
    }
  });
  return h;
}

}  // namespace toolcache::mcp
