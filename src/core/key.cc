// CacheKey digest and the key builders of canonical_json.h.
//
// Invariants: the digest input is exactly EncodeKeyForDigest(key) (the tag,
// then four length-prefixed fields); Digest() streams the same bytes without
// building the string. The encoding is version-stable: any change needs a new
// tag (docs/KEYS.md), and key_test.cc pins a golden digest to catch it.
// Every key built here has object arguments without "_meta", with integers
// written exactly: both builders force drop_meta and kExactIntegers and
// reject any other JSON value than an object.
#include "toolcache/key.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "src/core/canonical_json_internal.h"
#include "src/core/key_internal.h"
#include "src/core/sha256.h"
#include "toolcache/canonical_json.h"

namespace toolcache {
namespace {

std::array<char, 8> BigEndian64(uint64_t v) {
  std::array<char, 8> b{};
  for (int i = 7; i >= 0; --i) {
    b[static_cast<size_t>(i)] = static_cast<char>(v & 0xFF);
    v >>= 8;
  }
  return b;
}

template <typename Sink>
void EmitEncoding(const CacheKey& key, Sink&& sink) {
  sink(kKeyDigestTagV1);
  for (const std::string* field :
       {&key.scope, &key.server, &key.tool, &key.canonical_args}) {
    const std::array<char, 8> len = BigEndian64(field->size());
    sink(std::string_view(len.data(), len.size()));
    sink(std::string_view(*field));
  }
}

// "an array", "a string", ... for the message of a non-object document.
std::string_view WithArticle(std::string_view type_name) {
  if (type_name == "array") return "an array";
  if (type_name == "string") return "a string";
  if (type_name == "number") return "a number";
  if (type_name == "boolean") return "a boolean";
  if (type_name == "null") return "null";
  return type_name;
}

// The type of a canonical document, from its first byte (RFC 8785 output
// starts with '{', '[', '"', 't', 'f', 'n' or a number).
std::string_view CanonicalTypeName(std::string_view canonical) {
  switch (canonical.empty() ? '\0' : canonical.front()) {
    case '{':
      return "object";
    case '[':
      return "array";
    case '"':
      return "string";
    case 't':
    case 'f':
      return "boolean";
    case 'n':
      return "null";
    default:
      return "number";
  }
}

Status NotAnObject(std::string_view type_name) {
  return InvalidArgument(
      std::string("must be a JSON object (MCP tools/call \"arguments\", LLM "
                  "tool_use \"input\"), got ") +
      std::string(WithArticle(type_name)));
}

CanonicalOptions KeyOptions(const CanonicalOptions& options) {
  CanonicalOptions o = options;
  o.drop_meta = true;  // "_meta is never part of the key" (docs/KEYS.md)
  // Calls a server tells apart (an integer beyond 2^53) never share a key.
  o.numbers = NumberForm::kExactIntegers;
  return o;
}

Result<CacheKey> BuildKey(std::string_view scope, std::string_view server,
                          std::string_view tool, Result<std::string> args) {
  if (!args.ok()) {
    return Status(args.status().code(),
                  "arguments: " + args.status().message());
  }
  return CacheKey{.scope = std::string(scope),
                  .server = std::string(server),
                  .tool = std::string(tool),
                  .canonical_args = std::move(*args)};
}

}  // namespace

std::string EncodeKeyForDigest(const CacheKey& key) {
  std::string out;
  out.reserve(kKeyDigestTagV1.size() + 32 + key.scope.size() +
              key.server.size() + key.tool.size() + key.canonical_args.size());
  EmitEncoding(key, [&](std::string_view b) { out.append(b); });
  return out;
}

std::array<uint8_t, 32> CacheKey::Digest() const {
  Sha256 h;
  // Choice: a key whose encoding fits 512 bytes (nearly every key) is
  // gathered on the stack and hashed in one Update: each of the nine
  // Updates of the streamed form paid OpenSSL's EVP dispatch and partial
  // block bookkeeping (callgrind: ~900 of a serve hit's instructions).
  constexpr size_t kGathered = 512;
  std::array<char, kGathered> buf;
  size_t n = 0;
  bool fits = true;
  EmitEncoding(*this, [&](std::string_view b) {
    if (!fits) return;
    if (b.size() > kGathered - n) {
      fits = false;
      return;
    }
    std::copy(b.begin(), b.end(), buf.begin() + static_cast<ptrdiff_t>(n));
    n += b.size();
  });
  if (fits) {
    h.Update(std::string_view(buf.data(), n));
  } else {
    EmitEncoding(*this, [&](std::string_view b) { h.Update(b); });
  }
  return h.Finish();
}

std::string CacheKey::DigestHex() const { return ToHex(Digest()); }

uint64_t CacheKey::Id() const {
  const std::array<uint8_t, 32> d = Digest();
  uint64_t id = 0;
  for (size_t i = 0; i < 8; ++i) id = (id << 8) | d[i];
  return id;
}

Result<CacheKey> MakeCacheKey(std::string_view scope, std::string_view server,
                              std::string_view tool,
                              std::string_view arguments_json,
                              const CanonicalOptions& options) {
  Result<std::string> args =
      CanonicalizeJson(arguments_json, KeyOptions(options));
  if (args.ok() && CanonicalTypeName(*args) != "object") {
    args = NotAnObject(CanonicalTypeName(*args));
  }
  return BuildKey(scope, server, tool, std::move(args));
}

// The same canonicalization as MakeCacheKey (the same options, object
// check and messages), keeping the top-level members.
Result<CanonicalArguments> CanonicalizeArguments(
    std::string_view arguments_json, const CanonicalOptions& options) {
  CanonicalArguments out;
  Result<std::string> args = jcs::CanonicalizeWithMembers(
      arguments_json, KeyOptions(options), &out.members);
  if (args.ok() && CanonicalTypeName(*args) != "object") {
    args = NotAnObject(CanonicalTypeName(*args));
  }
  if (!args.ok()) {
    return Status(args.status().code(),
                  "arguments: " + args.status().message());
  }
  out.canonical = std::move(*args);
  return out;
}

Result<CacheKey> MakeCacheKeyFromValue(std::string_view scope,
                                       std::string_view server,
                                       std::string_view tool,
                                       const nlohmann::json& arguments,
                                       const CanonicalOptions& options) {
  if (!arguments.is_object()) {
    return BuildKey(scope, server, tool, NotAnObject(arguments.type_name()));
  }
  return BuildKey(scope, server, tool,
                  CanonicalizeJsonValue(arguments, KeyOptions(options)));
}

}  // namespace toolcache
