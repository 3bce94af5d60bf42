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
//     RFC 8785 canonical arguments.
#include <cstddef>
#include <cstdint>
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

void CheckDocument(std::string_view doc) {
  const auto rfc = CanonicalizeJson(doc, Plain());
  const auto exact = CanonicalizeJson(doc, Plain(NumberForm::kExactIntegers));
  const auto inexact = toolcache::FindInexactIntegers(doc, Plain());
  FUZZ_CHECK(rfc.ok() == exact.ok() && rfc.ok() == inexact.ok(),
             "number forms disagree on validity");
  if (!rfc.ok()) return;
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
}

void CheckKeys(const std::vector<std::string_view>& parts) {
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
  CheckDocument(parts[0]);
  if (parts.size() > 1) CheckDocument(parts[1]);
  CheckKeys(parts);
  return 0;
}
