// Fuzz target: RFC 8785 canonicalisation and the cache-key builder.
//
// Input: '\xff'-separated parts: document A, document B, then up to six
// scope/server/tool strings (A's three, then B's three).
// Invariants (besides no crash, no sanitizer report):
//   * the canonical form is a fixed point, for kRfc8785 and kExactIntegers;
//   * kExactIntegers differs from kRfc8785 exactly when FindInexactIntegers
//     names a number;
//   * the text path and the parsed-value path agree (nlohmann parses the
//     document; CanonicalizeJsonValue gives the same bytes), and
//     re-spelling the document (nlohmann's dump: indentation, \u escapes
//     for non-ASCII, other number spellings) does not change its form;
//   * a key's canonical arguments are a fixed point of MakeCacheKey;
//   * two keys are equal iff their digests are, and equal keys imply equal
//     RFC 8785 canonical arguments; the parsed-value key builder agrees
//     with the text one whenever it accepts; Id() is the digest's prefix;
//   * a depth limit refuses or changes nothing; dropping top-level members
//     equals canonicalising the document with them erased.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "fuzz/fuzz_input.h"
#include "toolcache/canonical_json.h"

namespace {

using toolcache::CacheKey;
using toolcache::CanonicalizeJson;
using toolcache::CanonicalOptions;
using toolcache::NumberForm;

CanonicalOptions Plain(NumberForm numbers = NumberForm::kRfc8785) {
  CanonicalOptions o;
  o.drop_meta = false;
  o.numbers = numbers;
  return o;
}

// Checks `doc`; returns nlohmann's parse of it (discarded when invalid),
// which CheckKeys reuses.
nlohmann::json CheckDocument(std::string_view doc) {
  const auto rfc = CanonicalizeJson(doc, Plain());
  const auto exact = CanonicalizeJson(doc, Plain(NumberForm::kExactIntegers));
  const auto inexact = toolcache::FindInexactIntegers(doc, Plain());
  FUZZ_CHECK(rfc.ok() == exact.ok() && rfc.ok() == inexact.ok(),
             "number forms disagree on validity");
  if (!rfc.ok()) return nlohmann::json::parse(doc, nullptr, false);
  const auto again = CanonicalizeJson(*rfc, Plain());
  FUZZ_CHECK(again.ok() && *again == *rfc,
             "RFC 8785 form is not a fixed point");
  const auto exact_again =
      CanonicalizeJson(*exact, Plain(NumberForm::kExactIntegers));
  FUZZ_CHECK(exact_again.ok() && *exact_again == *exact,
             "kExactIntegers form is not a fixed point");
  FUZZ_CHECK(inexact->empty() == (*exact == *rfc),
             "FindInexactIntegers disagrees with kExactIntegers");

  const nlohmann::json parsed = nlohmann::json::parse(doc, nullptr, false);
  FUZZ_CHECK(!parsed.is_discarded(), "nlohmann rejects a canonicalised doc");
  const auto value = toolcache::CanonicalizeJsonValue(parsed, Plain());
  FUZZ_CHECK(value.ok() && *value == *rfc,
             "text and parsed-value paths disagree");
  const std::string respelled = parsed.dump(1, ' ', /*ensure_ascii=*/true);
  const auto from_respelled = CanonicalizeJson(respelled, Plain());
  FUZZ_CHECK(from_respelled.ok() && *from_respelled == *rfc,
             "re-spelling the document changed its canonical form");

  // A shallow depth limit either refuses or changes nothing.
  CanonicalOptions shallow = Plain();
  shallow.max_depth = 3;
  const auto limited = CanonicalizeJson(doc, shallow);
  FUZZ_CHECK(!limited.ok() || *limited == *rfc, "a depth limit changed bytes");

  // Dropping top-level members = canonicalising the document without them.
  CanonicalOptions dropping;
  dropping.ignore_fields = {"a", ""};
  const auto dropped = CanonicalizeJson(doc, dropping);
  FUZZ_CHECK(dropped.ok(), "dropping members made a valid document invalid");
  nlohmann::json without = parsed;
  if (without.is_object()) {
    for (const char* name : {"a", "", "_meta"}) without.erase(name);
  }
  const auto expected = toolcache::CanonicalizeJsonValue(without, Plain());
  FUZZ_CHECK(expected.ok() && *expected == *dropped,
             "dropped members differ from erasing them");
  return parsed;
}

// `parsed[i]`: nlohmann's parse of part i (CheckDocument's).
void CheckKeys(const std::vector<std::string_view>& parts,
               const nlohmann::json (&parsed)[2]) {
  auto field = [&](size_t i) {
    return i < parts.size() ? parts[i] : std::string_view();
  };
  const std::string_view docs[2] = {field(0), field(1)};
  toolcache::Result<CacheKey> keys[2] = {
      toolcache::MakeCacheKey(field(2), field(3), field(4), docs[0]),
      toolcache::MakeCacheKey(field(5), field(6), field(7), docs[1])};
  for (int i = 0; i < 2; ++i) {
    if (!keys[i].ok()) continue;
    const CacheKey& k = *keys[i];
    const auto again =
        toolcache::MakeCacheKey(k.scope, k.server, k.tool, k.canonical_args);
    FUZZ_CHECK(again.ok() && *again == k,
               "a key's canonical arguments are not a fixed point");
    CanonicalOptions o;
    o.numbers = NumberForm::kExactIntegers;
    const auto direct = CanonicalizeJson(docs[i], o);
    FUZZ_CHECK(direct.ok() && *direct == k.canonical_args,
               "MakeCacheKey differs from CanonicalizeJson");
    // The parsed-value key builder agrees whenever it accepts the document
    // (it refuses integers a double may have rounded).
    if (!parsed[i].is_discarded()) {
      const auto from_value = toolcache::MakeCacheKeyFromValue(
          k.scope, k.server, k.tool, parsed[i]);
      FUZZ_CHECK(!from_value.ok() || *from_value == k,
                 "text and parsed-value key builders disagree");
    }
    const std::string hex = k.DigestHex();
    char id[17];
    std::snprintf(id, sizeof id, "%016llx",
                  static_cast<unsigned long long>(k.Id()));
    FUZZ_CHECK(hex.size() == 64 && hex.compare(0, 16, id) == 0,
               "Id() is not the digest's first 8 bytes");
  }
  if (!keys[0].ok() || !keys[1].ok()) return;
  const bool equal = *keys[0] == *keys[1];
  FUZZ_CHECK(equal == (keys[0]->Digest() == keys[1]->Digest()),
             "key equality and digest equality disagree");
  if (equal) {
    const auto a = CanonicalizeJson(docs[0]);
    const auto b = CanonicalizeJson(docs[1]);
    FUZZ_CHECK(a.ok() && b.ok() && *a == *b,
               "equal keys with different canonical arguments");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  toolcache::fuzz::FuzzInput in(data, size);
  const std::vector<std::string_view> parts = in.Parts();
  if (parts.empty()) {
    CheckDocument("");
    return 0;
  }
  const nlohmann::json parsed[2] = {
      CheckDocument(parts[0]), parts.size() > 1
                                   ? CheckDocument(parts[1])
                                   : nlohmann::json::parse("", nullptr, false)};
  CheckKeys(parts, parsed);
  return 0;
}
