#include "src/llm/edits.h"

#include <gtest/gtest.h>

namespace toolcache::llm {
namespace {

TEST(BodyEdits, AppliesInPositionOrderWhateverTheOrderMade) {
  const std::string body = R"({"a":[1,2],"b":"x"})";
  BodyEdits e;
  e.Replace(15, 18, R"("yy")");  // "x" -> "yy"
  e.Insert(9, ",3");             // after 2
  e.Insert(9, ",4");             // same position: after the first insert
  EXPECT_EQ(e.Apply(body), R"({"a":[1,2,3,4],"b":"yy"})");
  EXPECT_EQ(e.skipped(), 0u);
}

TEST(BodyEdits, SkipsAndCountsAnOverlappingEdit) {
  BodyEdits e;
  e.Replace(2, 6, "X");
  e.Replace(4, 8, "Y");   // overlaps the first
  e.Replace(9, 99, "Z");  // past the end
  EXPECT_EQ(e.Apply("0123456789"), "01X6789");
  EXPECT_EQ(e.skipped(), 2u);
}

TEST(BodyEdits, MapsPositionsThroughTheEdits) {
  const std::string body = "abcdefgh";
  BodyEdits e;
  e.Insert(2, "XYZ");    // +3 before position 2's byte
  e.Replace(4, 6, "Q");  // -1
  const std::string out = e.Apply(body);
  EXPECT_EQ(out, "abXYZcdQgh");
  EXPECT_EQ(out[e.Map(3)], body[3]);  // 'd'
  EXPECT_EQ(out[e.Map(6)], body[6]);  // 'g'
  EXPECT_EQ(e.Map(8), out.size());    // the end
  EXPECT_EQ(e.Map(0), 0u);
}

}  // namespace
}  // namespace toolcache::llm
