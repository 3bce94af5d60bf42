// Era: which MCP protocol era a request belongs to, and what of it a cache
// may rely on.
//
// MCP 2026-07-28 (the stateless revision) has no initialize handshake:
// every request carries its own envelope in params._meta, keyed
// "io.modelcontextprotocol/protocolVersion" (the claim: a request with this
// key is a modern request), "io.modelcontextprotocol/clientCapabilities"
// (required, an object), "io.modelcontextprotocol/clientInfo" and
// "io.modelcontextprotocol/logLevel" (optional). The 2025 era negotiates
// once, with initialize. ReadRequestEra reads one request's params and says:
//   * whether it claims the modern era, and whether its envelope is one the
//     2026-07-28 server accepts (the checks of the TypeScript SDK 2.4.0
//     server's checkInboundEnvelope / RequestMetaEnvelopeSchema, plus the
//     revision being one this proxy knows). A request a server would reject
//     is never answered from cache: the session forwards it and the server
//     answers with its own error;
//   * whether it is a multi round-trip retry (params.inputResponses or
//     params.requestState): never cached, never served (the caching page:
//     "Results produced by retrying a request ... MUST NOT be cached");
//     requestState is untrusted and never read beyond its presence;
//   * the key material of the request: the protocol version and the
//     client capabilities (a server may answer differently to a client that
//     declares other capabilities), canonicalized; and the request's params
//     without _meta (the "request parameters that affect the result" of
//     list and read requests). progressToken, clientInfo (self-reported,
//     "servers should not rely on it for behavior"), logLevel and trace
//     context never enter a key.
// ReadCacheHints reads a result's resultType, ttlMs and cacheScope.
//
// Thread-safety: free functions without state. Ownership: results own their
// strings.
//
// Example:
//   RequestEra e = ReadRequestEra(m.params);
//   if (e.claim && !e.problem.empty()) Forward();  // the server answers
//   CacheHints h = ReadCacheHints(result);
//   if (h.cacheable()) Store(h.ttl_seconds, h.shared);
#ifndef TOOLCACHE_SRC_MCP_ERA_H_
#define TOOLCACHE_SRC_MCP_ERA_H_

#include <string>
#include <string_view>

namespace toolcache::mcp {

// The modern revision this proxy knows (the TypeScript SDK 2.4.0's
// SUPPORTED_MODERN_PROTOCOL_VERSIONS).
inline constexpr std::string_view kModernProtocolVersion = "2026-07-28";
inline constexpr std::string_view kProtocolVersionMetaKey =
    "io.modelcontextprotocol/protocolVersion";
inline constexpr std::string_view kClientCapabilitiesMetaKey =
    "io.modelcontextprotocol/clientCapabilities";
inline constexpr std::string_view kClientInfoMetaKey =
    "io.modelcontextprotocol/clientInfo";
inline constexpr std::string_view kLogLevelMetaKey =
    "io.modelcontextprotocol/logLevel";

enum class Era {
  kUnknown,  // nothing seen yet (treated as the 2025 era, as the SDKs do)
  kLegacy,   // after initialize
  kModern,   // after a request with a valid 2026-07-28 envelope
};

std::string_view EraName(Era era);  // "unknown", "2025", "2026-07-28"

// True for a revision of the modern era (>= 2026-07-28; revision ids are
// ISO dates, compared as strings, as the SDK does).
bool IsModernProtocolVersion(std::string_view version);

struct RequestEra {
  // params._meta carries the protocol-version key: a modern request.
  bool claim = false;
  std::string protocol_version;  // decoded, when a string
  // Why a 2026-07-28 server would reject the envelope ("" = it accepts it;
  // only meaningful when claim is true).
  std::string problem;
  // params carries inputResponses or requestState (a multi round-trip
  // retry).
  bool retry = false;
  // claim && problem.empty(): {"clientCapabilities":<canonical>,
  // "protocolVersion":"..."} (sorted members, no spaces).
  std::string key_material;
  // claim && problem.empty(): the reserved envelope members as they
  // appeared (protocolVersion, clientCapabilities, clientInfo), as JSON
  // member text "\"k\":v,...", for the proxy's own requests in this era.
  std::string envelope_members;
  // params without _meta (and without inputResponses / requestState) as a
  // JSON object text; "{}" when params is absent. "" when params is not an
  // object.
  std::string params_without_meta;
};

// Reads the params of one request (the raw `params` span; "" = absent).
// `with_params` false leaves params_without_meta empty (saves copying a
// tools/call's arguments).
RequestEra ReadRequestEra(std::string_view params, bool with_params = true);

// The longest TTL a server's ttlMs may give an entry (24 h). Choice: the
// TypeScript SDK client's MAX_CACHE_TTL_MS, so a server cannot pin an entry
// indefinitely.
inline constexpr double kMaxCacheTtlMs = 86400000;

// The operations whose results carry ttlMs / cacheScope in 2026-07-28.
bool IsCacheableResultMethod(std::string_view method);

struct CacheHints {
  bool result_type_present = false;
  std::string result_type;  // decoded resultType ("" when absent)
  bool has_ttl = false;     // ttlMs is a non-negative integer
  double ttl_seconds = 0;   // ttlMs / 1000, at most kMaxCacheTtlMs / 1000
  bool has_scope = false;   // cacheScope is "public" or "private"
  bool shared = false;      // cacheScope == "public"
  // A complete result that declares a positive ttlMs and a known scope:
  // it may be stored for ttl_seconds.
  bool cacheable() const {
    return result_type == "complete" && has_ttl && ttl_seconds > 0 && has_scope;
  }
};

// Reads the hints of a result object text (validated JSON).
CacheHints ReadCacheHints(std::string_view result);

}  // namespace toolcache::mcp

#endif  // TOOLCACHE_SRC_MCP_ERA_H_
