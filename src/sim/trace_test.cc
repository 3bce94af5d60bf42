// Tests for the JSON Lines trace reader and writer (docs/TRACES.md).
#include "toolcache/trace.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>

#include "tests/support/test_data.h"

namespace toolcache {
namespace {

using ::testing::HasSubstr;

const std::string kDataDir = testing::TestDataPath("traces/");

Result<Trace> ReadString(const std::string& text) {
  std::istringstream in(text);
  return ReadTrace(in, "t.jsonl");
}

TEST(TraceReaderTest, ReadsDocumentedFormatWithDefaults) {
  Result<Trace> t = ReadTraceFile(kDataDir + "valid.jsonl");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->name, "valid");
  ASSERT_EQ(t->records.size(), 2u);
  const TraceRecord& a = t->records[0];
  EXPECT_EQ(a.session, "s1");
  EXPECT_EQ(a.user, "u1");
  EXPECT_EQ(a.tool, "get_weather");
  EXPECT_EQ(a.arguments, R"({"city":"Paris","units":"metric"})");
  EXPECT_EQ(a.result_size, 10u);
  EXPECT_DOUBLE_EQ(a.latency, 0.2);
  EXPECT_DOUBLE_EQ(a.cost, 0.0016);
  EXPECT_DOUBLE_EQ(a.ttl, 600);
  EXPECT_FALSE(a.error);
  EXPECT_EQ(a.request_type, RequestType::kInformational);
  EXPECT_EQ(a.result_digest, "sha256:ab");
  EXPECT_TRUE(std::isnan(a.time));
  const TraceRecord& b = t->records[1];
  EXPECT_EQ(b.session, "");
  EXPECT_EQ(b.arguments, "{}");
  EXPECT_DOUBLE_EQ(b.latency, 0);
  EXPECT_DOUBLE_EQ(b.cost, 0);
  EXPECT_TRUE(std::isnan(b.ttl));
  EXPECT_EQ(b.request_type, RequestType::kCommand);
  EXPECT_EQ(b.result_digest, "");
}

TEST(TraceReaderTest, ArgumentsAreStoredCanonical) {
  Result<Trace> t = ReadString(
      R"({"tool":"f","arguments":{ "b" : [1.0, 2], "a" : {"y":1,"x":"é"} },"result_size":1})"
      "\n");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->records[0].arguments, R"({"a":{"x":"é","y":1},"b":[1,2]})");
}

struct BadCase {
  const char* line;
  const char* reason;
};

class TraceRejectTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(TraceRejectTest, RejectsBadLineWithLineNumberAndReason) {
  // A good first line and a blank line, so the bad one is line 3.
  const std::string text =
      std::string(R"({"tool":"ok","arguments":{},"result_size":1})") + "\n\n" +
      GetParam().line + "\n";
  Result<Trace> t = ReadString(text);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(), HasSubstr("t.jsonl:3: "));
  EXPECT_THAT(t.status().message(), HasSubstr(GetParam().reason));
}

INSTANTIATE_TEST_SUITE_P(
    EachBadCase, TraceRejectTest,
    ::testing::Values(
        BadCase{R"({"tool":"f","arguments":{})", "not valid JSON"},
        BadCase{R"([1,2])", "a record must be a JSON object"},
        BadCase{R"({"arguments":{},"result_size":1})",
                "missing required field 'tool'"},
        BadCase{R"({"tool":"","arguments":{},"result_size":1})",
                "'tool' must be a non-empty string"},
        BadCase{R"({"tool":"f","result_size":1})",
                "missing required field 'arguments'"},
        BadCase{R"({"tool":"f","arguments":"{}","result_size":1})",
                "'arguments' must be a JSON object"},
        BadCase{R"({"tool":"f","arguments":{}})",
                "missing required field 'result_size'"},
        BadCase{R"({"tool":"f","arguments":{},"result_size":-1})",
                "'result_size' must be a non-negative integer"},
        BadCase{R"({"tool":"f","arguments":{},"result_size":1.5})",
                "'result_size' must be a non-negative integer"},
        BadCase{R"({"tool":"f","arguments":{},"result_size":1,"colour":1})",
                "unknown field 'colour'"},
        BadCase{R"({"tool":"f","arguments":{},"result_size":1,"tool":"g"})",
                "duplicate field 'tool'"},
        BadCase{R"({"tool":"f","arguments":{},"result_size":1,"latency":-2})",
                "'latency' must be a non-negative number"},
        BadCase{R"({"tool":"f","arguments":{},"result_size":1,"cost":"1"})",
                "'cost' must be a non-negative number"},
        BadCase{R"({"tool":"f","arguments":{},"result_size":1,"ttl":-1})",
                "'ttl' must be a non-negative number"},
        BadCase{R"({"tool":"f","arguments":{},"result_size":1,"error":"yes"})",
                "'error' must be true or false"},
        BadCase{
            R"({"tool":"f","arguments":{},"result_size":1,"request_type":"READ"})",
            "'request_type' must be \"INFORMATIONAL\" or \"COMMAND\""},
        BadCase{R"({"tool":"f","arguments":{},"result_size":1,"session":3})",
                "'session' must be a string"},
        BadCase{R"({"tool":"f","arguments":{},"result_size":1,"time":5})",
                "'time' is present here but missing on earlier records"},
        // Bounds (trace.h): sums stay finite, capacities cannot wrap.
        BadCase{
            R"({"tool":"f","arguments":{},"result_size":18446744073709551615})",
            "'result_size' 18446744073709551615 exceeds the maximum "
            "1099511627776 (1 TiB)"},
        BadCase{R"({"tool":"f","arguments":{},"result_size":1099511627777})",
                "exceeds the maximum 1099511627776"},
        BadCase{
            R"({"tool":"f","arguments":{},"result_size":1,"latency":1e308})",
            "'latency' 1e+308 exceeds the maximum 1000000.0"},
        BadCase{R"({"tool":"f","arguments":{},"result_size":1,"cost":1e7})",
                "'cost' 10000000.0 exceeds the maximum 1000000.0"},
        BadCase{R"({"tool":"f","arguments":{},"result_size":1,"tenant":7})",
                "'tenant' must be a string"}));

TEST(TraceReaderTest, AcceptsTheLargestAllowedValuesAndTenant) {
  Result<Trace> t = ReadString(
      R"({"tool":"f","arguments":{},"result_size":1099511627776,"latency":1e6,"cost":1e6,"tenant":"w1"})"
      "\n");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->records[0].result_size, kMaxTraceResultSize);
  EXPECT_EQ(t->records[0].tenant, "w1");
}

TEST(TraceReaderTest, RejectsTimeGoingBackwards) {
  Result<Trace> t =
      ReadString(R"({"time":5,"tool":"f","arguments":{},"result_size":1})"
                 "\n"
                 R"({"time":3,"tool":"f","arguments":{},"result_size":1})"
                 "\n");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(),
              HasSubstr("t.jsonl:2: 'time' 3.0 is before the previous "
                        "record's time 5.0"));
}

TEST(TraceReaderTest, RejectsTimeMissingAfterTimedRecords) {
  Result<Trace> t =
      ReadString(R"({"time":5,"tool":"f","arguments":{},"result_size":1})"
                 "\n"
                 R"({"tool":"f","arguments":{},"result_size":1})"
                 "\n");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(), HasSubstr("t.jsonl:2: 'time' is missing"));
}

TEST(TraceReaderTest, MissingFileIsNotFound) {
  Result<Trace> t = ReadTraceFile(kDataDir + "does-not-exist.jsonl");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kNotFound);
}

TEST(TraceWriterTest, RoundTripPreservesEveryField) {
  Trace in;
  TraceRecord a;
  a.time = 0.5;
  a.session = "s\"1";
  a.user = "ü";
  a.tool = "search";
  a.arguments = R"({"q":"x"})";
  a.result_size = 123456789012;
  a.latency = 1.35;
  a.cost = 0.005;
  a.ttl = 3600;
  a.error = true;
  a.request_type = RequestType::kInformational;
  a.result_digest = "sha256:00";
  a.tenant = "bfcl:abc+def";
  TraceRecord b = a;
  b.tenant.clear();
  b.time = 2.25;
  b.ttl = std::nan("");
  b.request_type.reset();
  b.result_digest.clear();
  b.error = false;
  b.arguments = "{}";
  in.records = {a, b};
  std::stringstream buf;
  WriteTrace(in, buf);
  const std::string first = buf.str();
  Result<Trace> out = ReadTrace(buf, "rt");
  ASSERT_TRUE(out.ok()) << out.status().message();
  ASSERT_EQ(out->records.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const TraceRecord& x = in.records[i];
    const TraceRecord& y = out->records[i];
    EXPECT_EQ(x.time, y.time);
    EXPECT_EQ(x.session, y.session);
    EXPECT_EQ(x.user, y.user);
    EXPECT_EQ(x.tenant, y.tenant);
    EXPECT_EQ(x.tool, y.tool);
    EXPECT_EQ(x.arguments, y.arguments);
    EXPECT_EQ(x.result_size, y.result_size);
    EXPECT_EQ(x.latency, y.latency);
    EXPECT_EQ(x.cost, y.cost);
    EXPECT_EQ(std::isnan(x.ttl), std::isnan(y.ttl));
    if (!std::isnan(x.ttl)) {
      EXPECT_EQ(x.ttl, y.ttl);
    }
    EXPECT_EQ(x.error, y.error);
    EXPECT_EQ(x.request_type, y.request_type);
    EXPECT_EQ(x.result_digest, y.result_digest);
  }
  // Writing what was read gives the same bytes (a fixed point).
  std::stringstream again;
  WriteTrace(*out, again);
  EXPECT_EQ(again.str(), first);
}

TEST(TraceWriterTest, WritesDocumentedFieldOrderAndOmitsUnknowns) {
  Trace t;
  TraceRecord r;
  r.tool = "ls";
  r.arguments = "{}";
  r.result_size = 3;
  t.records.push_back(r);
  std::ostringstream out;
  WriteTrace(t, out);
  EXPECT_EQ(out.str(),
            R"({"session":"","user":"","tool":"ls","arguments":{},)"
            R"("result_size":3,"latency":0.0,"cost":0.0,"error":false})"
            "\n");
}

}  // namespace
}  // namespace toolcache
