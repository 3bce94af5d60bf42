// Trace file formats (trace_formats.h).
//
// Invariants:
//   - JSONL: a line is accepted by the fast path only when every member was
//     read and checked as the reference parser (trace_internal::
//     ParseTraceRecord) checks it; anything else (an "x_" member, a
//     duplicate, an unexpected type, a number simdjson will not give as the
//     asked type, trailing text) goes to the reference parser, whose verdict
//     and message win. So the records and errors equal ReadTrace's.
//   - The arguments text of a line is canonicalized once per distinct text
//     (memo); a memo entry was validated by nlohmann + CanonicalArguments.
//   - The JSONL reader maps the file and drops the pages it has consumed
//     every kReleaseEvery bytes, so it never holds the whole file; a line
//     is copied (with simdjson's padding) only for the simdjson path.
//   - Binary: every id and offset read from a file is range-checked before
//     use; a corrupt file is an InvalidArgument, never a crash.
//   - CSV: the one-pass line scanner accepts a subset of what the general
//     line reader accepts, with the same values; every other line (and
//     every error) goes through the general reader. A decimal key and a
//     text key are never the same object, as in the text path's
//     {"id": 7} / {"id": "7"} (ReadCsv keeps two tables, one key counter).
//   - Plain streams (StreamPlainTrace): the object index, size and clock
//     of each record are those TraceBuilder would put in its columns (the
//     same key numbering, max(1, size), Push's clock rule), so FeedPlain
//     replays exactly what Feed would; a key the first pass did not vouch
//     for is refused before it indexes the key table.
#include "src/sim/trace_formats.h"

#include <fcntl.h>
#include <simdjson.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <span>
#include <unordered_map>
#include <vector>

#include "src/policy/flat_map.h"
#include "src/sim/convert_common.h"
#include "src/sim/trace_builder.h"
#include "toolcache/config.h"
#include "toolcache/request_features.h"

namespace toolcache::sim {
namespace {

using RecordSink = std::function<Status(const RecordView&)>;
using BatchSink = std::function<Status(std::span<const RecordView>)>;
using Progress = std::function<void(uint64_t, uint64_t)>;

constexpr char kMagic[8] = {'T', 'C', 'T', 'R', 'A', 'C', 'E', '\0'};
constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderSize = 64;
constexpr size_t kRecordSize = 88;
// plain_total's flag: the header declares the trace plain.
constexpr uint64_t kPlainDeclared = uint64_t{1} << 63;
constexpr uint64_t kProgressEvery = uint64_t{8} << 20;  // bytes
// Mapped input pages are dropped every this many bytes consumed.
constexpr uint64_t kReleaseEvery = uint64_t{2} << 20;

// The binary record, little-endian, packed (offsets in the comments).
struct BinRecord {
  uint64_t key;             // 0
  uint64_t param_category;  // 8
  uint64_t size;            // 16
  double latency;           // 24
  double cost;              // 32
  double ttl;               // 40: NaN none, +inf never expires
  double time;              // 48: NaN none
  uint64_t next_access;     // 56: next record of the same key, ~0 none
  uint32_t tool;            // 64: 1-based
  uint32_t user;            // 68: 0 = ""
  uint32_t session;         // 72
  uint32_t tenant;          // 76: 0 = ""
  uint32_t digest;          // 80: 0 = ""
  uint8_t type;             // 84: 0 none, 1 INFORMATIONAL, 2 COMMAND
  uint8_t error;            // 85
  uint16_t reserved;        // 86
};
static_assert(sizeof(BinRecord) == kRecordSize);

struct BinHeader {
  char magic[8];
  uint32_t version;
  uint32_t record_size;
  uint64_t record_count;
  uint64_t key_count;
  uint64_t strings_offset;
  uint64_t strings_size;
  // The plain declaration (zero in files written before it: those take the
  // two-pass read). When plain_total has kPlainDeclared set, the writer
  // vouches that every record is plain (PlainConstants: INFORMATIONAL, no
  // error or digest, record 0's tool, user, session, category, latency,
  // cost and TTL throughout, keys numbered as they first appear); the low
  // bits are the sum of max(1, size) over the records, plain_unique the
  // same over each key's first record. Readers check every record against
  // it (StreamPlainTrace) and trust nothing.
  uint64_t plain_unique;
  uint64_t plain_total;
};
static_assert(sizeof(BinHeader) == kHeaderSize);

// Whether record `r` is plain and shares `first`'s constants (the fields
// PlainConstants holds, compared bit for bit as the builder's columns do).
inline bool SamePlainFields(const BinRecord& r, const BinRecord& first) {
  return r.type == 1 && r.error == 0 && r.digest == 0 && r.tool == first.tool &&
         r.user == first.user && r.session == first.session &&
         r.param_category == first.param_category &&
         std::bit_cast<uint64_t>(r.latency) ==
             std::bit_cast<uint64_t>(first.latency) &&
         std::bit_cast<uint64_t>(r.cost) ==
             std::bit_cast<uint64_t>(first.cost) &&
         std::bit_cast<uint64_t>(r.ttl) == std::bit_cast<uint64_t>(first.ttl);
}

// The plain second read's test of one record, word by word: the seven
// 8-byte words of a binary record that hold only constants of a plain trace
// (category; latency; cost; TTL; tool and user; session; digest, type and
// error -- masked where a word shares bytes with the tenant or the reserved
// field) are compared with the words `k` implies, with no branch per field
// and no copy of the record. Matches(p) is exactly "type 1, error 0, digest
// 0, and k's tool, user, session, category, latency, cost and TTL bits".
class PlainWords {
 public:
  explicit PlainWords(const PlainConstants& k) {
    BinRecord r{};
    r.param_category = k.param_category;
    r.tool = k.tool;
    r.user = k.user;
    r.session = k.session;
    r.type = 1;
    std::memcpy(want_, &r, kRecordSize);
    // The doubles as bits (compared bit for bit, NaN payloads included).
    want_[3] = std::bit_cast<uint64_t>(k.latency);
    want_[4] = std::bit_cast<uint64_t>(k.cost);
    want_[5] = k.ttl_bits;
  }
  [[gnu::always_inline]] bool Matches(const char* p) const {
    const uint64_t diff =
        (Load(p, 1) ^ want_[1]) |                  // param_category
        (Load(p, 3) ^ want_[3]) |                  // latency
        (Load(p, 4) ^ want_[4]) |                  // cost
        (Load(p, 5) ^ want_[5]) |                  // ttl
        (Load(p, 8) ^ want_[8]) |                  // tool, user
        ((Load(p, 9) ^ want_[9]) & 0xffffffffu) |  // session, not tenant
        // digest, type, error; not the reserved bytes
        ((Load(p, 10) ^ want_[10]) & 0x0000ffffffffffffull);
    return diff == 0;
  }

 private:
  static uint64_t Load(const char* p, size_t index) {
    uint64_t v;
    std::memcpy(&v, p + index * 8, 8);
    return v;
  }
  uint64_t want_[kRecordSize / 8];
};
static_assert(std::endian::native == std::endian::little,
              "PlainWords reads the little-endian record in host words");
static_assert(
    offsetof(BinRecord, param_category) == 8 &&
    offsetof(BinRecord, latency) == 24 && offsetof(BinRecord, cost) == 32 &&
    offsetof(BinRecord, ttl) == 40 && offsetof(BinRecord, tool) == 64 &&
    offsetof(BinRecord, user) == 68 && offsetof(BinRecord, session) == 72 &&
    offsetof(BinRecord, tenant) == 76 && offsetof(BinRecord, digest) == 80 &&
    offsetof(BinRecord, type) == 84 && offsetof(BinRecord, error) == 85);

std::string Stem(const std::string& path) {
  std::string stem = path.substr(path.find_last_of('/') + 1);
  if (auto dot = stem.find('.'); dot != std::string::npos && dot > 0) {
    stem.resize(dot);
  }
  return stem;
}

// Choice: the record loops over a mapped trace prefetch the bytes
// kPrefetchAhead beyond the record they decode. A mapping is a run of 4 KiB
// page-cache pages, and the hardware prefetcher does not follow a stream
// across a page boundary: the plain binary reader spent 60 % of its samples
// on the load that first touched a record's line (perf, LRU 1 %, 10M
// records). 8 KiB was the best of 1, 4, 8 and 16 KiB there (user + system,
// medians of 5: 0.55 -> 0.48 s); a prefetch never faults, so running past
// the end of the mapping is harmless (the address is formed as an integer).
constexpr uintptr_t kPrefetchAhead = uintptr_t{8} << 10;
[[gnu::always_inline]] inline void PrefetchAhead(const char* p) {
  __builtin_prefetch(reinterpret_cast<const void*>(
      reinterpret_cast<uintptr_t>(p) + kPrefetchAhead));
}

// A read-only mapping of a whole file.
class MappedFile {
 public:
  ~MappedFile() {
    if (data_ != nullptr && size_ > 0) {
      munmap(const_cast<char*>(data_), size_);
    }
  }
  Status Open(const std::string& path) {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NotFound(path + ": cannot open trace file");
    struct stat st {};
    if (fstat(fd, &st) != 0) {
      close(fd);
      return Unavailable(path + ": cannot stat");
    }
    size_ = static_cast<size_t>(st.st_size);
    if (size_ > 0) {
      void* m = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (m == MAP_FAILED) {
        close(fd);
        return Unavailable(path + ": cannot mmap");
      }
      data_ = static_cast<const char*>(m);
      madvise(m, size_, MADV_SEQUENTIAL);
      Ahead(0);
    }
    close(fd);
    return Status::Ok();
  }
  const char* data() const { return data_; }
  size_t size() const { return size_; }
  // Lets the kernel drop pages already consumed (keeps RSS flat) and maps
  // the next window ahead in one call (MADV_POPULATE_READ, Linux 5.14+;
  // ignored where unsupported) instead of a page fault every few pages.
  // Call with the bytes consumed so far, every kWindow bytes or so.
  void Done(size_t upto) {
    const size_t end = upto / kWindow * kWindow;
    if (end > released_) {
      madvise(const_cast<char*>(data_) + released_, end - released_,
              MADV_DONTNEED);
      released_ = end;
    }
    Ahead(upto);
  }
  // Maps [upto, upto + kWindow) ahead (see Done).
  void Ahead(size_t upto) {
#ifdef MADV_POPULATE_READ
    const size_t want = std::min(size_, (upto / kWindow + 2) * kWindow);
    if (want > populated_ && populate_) {
      const size_t from = std::max(populated_, upto / kWindow * kWindow);
      if (madvise(const_cast<char*>(data_) + from, want - from,
                  MADV_POPULATE_READ) != 0) {
        populate_ = false;  // an older kernel: page faults it is
      }
      populated_ = want;
    }
#else
    (void)upto;
#endif
  }

 private:
  static constexpr size_t kWindow = size_t{1} << 21;
  const char* data_ = nullptr;
  size_t size_ = 0;
  size_t released_ = 0;
  size_t populated_ = 0;
  bool populate_ = true;
};

// ---------------------------------------------------------------- JSONL

// Bits of the members a line carried.
enum : uint32_t {
  kTime = 1 << 0,
  kSession = 1 << 1,
  kUser = 1 << 2,
  kTenant = 1 << 3,
  kTool = 1 << 4,
  kArguments = 1 << 5,
  kResultSize = 1 << 6,
  kLatency = 1 << 7,
  kCost = 1 << 8,
  kTtl = 1 << 9,
  kError = 1 << 10,
  kRequestType = 1 << 11,
  kResultDigest = 1 << 12,
};

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const {
    return std::hash<std::string_view>{}(s);
  }
};

// A JSON string's bytes that end the plain shape: '"', '\\', a control
// character or anything outside printable ASCII.
inline bool IsStopByte(unsigned char c) {
  return c == '"' || c == '\\' || c < 0x20 || c >= 0x7f;
}

// The first stop byte (IsStopByte) in [p, end), or end. Eight bytes at a
// time on little-endian machines (SWAR: the lowest flagged byte of each
// test is exact, since a borrow only runs towards higher bytes).
inline const char* FirstStopByte(const char* p, const char* end) {
  if constexpr (std::endian::native == std::endian::little) {
    constexpr uint64_t kOnes = 0x0101010101010101ULL;
    constexpr uint64_t kHighs = 0x8080808080808080ULL;
    auto zero_bytes = [](uint64_t x) { return (x - kOnes) & ~x & kHighs; };
    while (end - p >= 8) {
      uint64_t x;
      std::memcpy(&x, p, 8);
      const uint64_t stop = zero_bytes(x ^ (kOnes * '"')) |
                            zero_bytes(x ^ (kOnes * '\\')) |
                            zero_bytes(x ^ (kOnes * 0x7f)) |
                            ((x - kOnes * 0x20) & ~x & kHighs) | (x & kHighs);
      if (stop != 0) return p + std::countr_zero(stop) / 8;
      p += 8;
    }
  }
  while (p < end && !IsStopByte(static_cast<unsigned char>(*p))) ++p;
  return p;
}

// The line scanner in front of simdjson for the commonest shape of a
// record: one object with no whitespace, known member names, plain ASCII
// strings without escapes, non-negative numbers in JSON grammar and
// arguments already in their plain canonical form (IsPlainCanonicalObject).
// It accepts a subset of what the simdjson path accepts, with the same
// values (numbers: integers and Clinger's fast path, else std::from_chars;
// all correctly rounded, as simdjson's and nlohmann's parsers); anything
// else returns false and the line takes the simdjson path (and, from
// there, the reference parser).
//
// Members are recognized by whole literals (quote, name, quote, colon)
// after a switch on the name's first letter: in the field order
// toolcache's writer and converters emit, each switch and each compare
// goes the same way on every line, and any other order takes the same
// code, so no layout is special-cased.
class PlainLineScanner {
 public:
  static bool Parse(const char* p, size_t len, RecordView* out) {
    const char* const end = p + len;
    if (len < 2 || *p != '{' || end[-1] != '}') return false;
    ++p;
    uint32_t seen = 0;
    RecordView r;
    while (true) {
      if (end - p < 2 || *p != '"') return false;
      uint32_t bit = 0;
      switch (p[1]) {
        case 't':
          if (Lit(&p, end, "\"time\":")) {
            bit = kTime;
            if (!Number(&p, end, kMaxTraceTimeSeconds, true, &r.time)) {
              return false;
            }
          } else if (Lit(&p, end, "\"tool\":")) {
            bit = kTool;
            if (!String(&p, end, &r.tool) || r.tool.empty()) return false;
          } else if (Lit(&p, end, "\"ttl\":")) {
            bit = kTtl;
            if (!Number(&p, end, std::numeric_limits<double>::max(), true,
                        &r.ttl)) {
              return false;
            }
          } else if (Lit(&p, end, "\"tenant\":")) {
            bit = kTenant;
            if (!String(&p, end, &r.tenant)) return false;
          } else {
            return false;
          }
          break;
        case 's':
          if (!Lit(&p, end, "\"session\":")) return false;
          bit = kSession;
          if (!String(&p, end, &r.session)) return false;
          break;
        case 'u':
          if (!Lit(&p, end, "\"user\":")) return false;
          bit = kUser;
          if (!String(&p, end, &r.user)) return false;
          break;
        case 'a':
          if (!Lit(&p, end, "\"arguments\":")) return false;
          bit = kArguments;
          if (const char* e = PlainCanonicalObjectEnd(p, end); e != nullptr) {
            r.arguments = std::string_view(p, e - p);
            p = e;
          } else {
            return false;
          }
          break;
        case 'r':
          if (Lit(&p, end, "\"result_size\":")) {
            bit = kResultSize;
            if (!Size(&p, end, &r.result_size)) return false;
          } else if (Lit(&p, end, "\"request_type\":")) {
            bit = kRequestType;
            if (Lit(&p, end, "\"INFORMATIONAL\"")) {
              r.request_type = RequestType::kInformational;
            } else if (Lit(&p, end, "\"COMMAND\"")) {
              r.request_type = RequestType::kCommand;
            } else if (!Lit(&p, end, "null")) {
              return false;
            }
          } else if (Lit(&p, end, "\"result_digest\":")) {
            bit = kResultDigest;
            if (!String(&p, end, &r.result_digest)) return false;
          } else {
            return false;
          }
          break;
        case 'l':
          if (!Lit(&p, end, "\"latency\":")) return false;
          bit = kLatency;
          if (!Number(&p, end, kMaxTraceLatencySeconds, false, &r.latency)) {
            return false;
          }
          break;
        case 'c':
          if (!Lit(&p, end, "\"cost\":")) return false;
          bit = kCost;
          if (!Number(&p, end, kMaxTraceCost, false, &r.cost)) return false;
          break;
        case 'e':
          if (!Lit(&p, end, "\"error\":")) return false;
          bit = kError;
          if (Lit(&p, end, "true")) {
            r.error = true;
          } else if (!Lit(&p, end, "false")) {
            return false;
          }
          break;
        default:
          return false;
      }
      if (seen & bit) return false;
      seen |= bit;
      if (p >= end) return false;
      if (*p == '}') {
        if (p + 1 != end) return false;
        break;
      }
      if (*p != ',') return false;
      ++p;
    }
    if ((seen & (kTool | kArguments | kResultSize)) !=
        (kTool | kArguments | kResultSize)) {
      return false;
    }
    *out = r;
    return true;
  }

  // The line at `p` in exactly the member order WriteTrace writes (and
  // bench/zipf_trace.py): time (optional), session, user, tenant
  // (optional), tool, arguments, result_size, latency, cost, ttl
  // (optional), error, request_type (optional), result_digest (optional),
  // with the same value rules as Parse. [p, end) is the rest of the file:
  // no token matches a '\n' (strings refuse control characters), so the
  // line is found without searching for its end first. Returns the line's
  // end (its '\n', or its "\r\n", or `end`), or nullptr: then the caller
  // reads the line through Parse and the slower paths. Accepts a subset of
  // what Parse accepts, with the same values.
  static const char* ParseWriterLine(const char* p, const char* end,
                                     RecordView* out) {
    RecordView& r = *out;
    r = RecordView();
    if (!Lit(&p, end, "{")) return nullptr;
    if (Lit(&p, end, "\"time\":")) {
      if (!Number(&p, end, kMaxTraceTimeSeconds, true, &r.time) ||
          !Lit(&p, end, ",")) {
        return nullptr;
      }
    }
    if (!Lit(&p, end, "\"session\":") || !String(&p, end, &r.session) ||
        !Lit(&p, end, ",\"user\":") || !String(&p, end, &r.user)) {
      return nullptr;
    }
    if (Lit(&p, end, ",\"tenant\":") && !String(&p, end, &r.tenant)) {
      return nullptr;
    }
    if (!Lit(&p, end, ",\"tool\":") || !String(&p, end, &r.tool) ||
        r.tool.empty() || !Lit(&p, end, ",\"arguments\":")) {
      return nullptr;
    }
    const char* args_end = PlainCanonicalObjectEnd(p, end);
    if (args_end == nullptr) return nullptr;
    r.arguments = std::string_view(p, args_end - p);
    p = args_end;
    if (!Lit(&p, end, ",\"result_size\":") || !Size(&p, end, &r.result_size) ||
        !Lit(&p, end, ",\"latency\":") ||
        !Number(&p, end, kMaxTraceLatencySeconds, false, &r.latency) ||
        !Lit(&p, end, ",\"cost\":") ||
        !Number(&p, end, kMaxTraceCost, false, &r.cost)) {
      return nullptr;
    }
    if (Lit(&p, end, ",\"ttl\":") &&
        !Number(&p, end, std::numeric_limits<double>::max(), true, &r.ttl)) {
      return nullptr;
    }
    if (Lit(&p, end, ",\"error\":true")) {
      r.error = true;
    } else if (!Lit(&p, end, ",\"error\":false")) {
      return nullptr;
    }
    if (Lit(&p, end, ",\"request_type\":")) {
      if (Lit(&p, end, "\"INFORMATIONAL\"")) {
        r.request_type = RequestType::kInformational;
      } else if (Lit(&p, end, "\"COMMAND\"")) {
        r.request_type = RequestType::kCommand;
      } else if (!Lit(&p, end, "null")) {
        return nullptr;
      }
    }
    if (Lit(&p, end, ",\"result_digest\":") &&
        !String(&p, end, &r.result_digest)) {
      return nullptr;
    }
    if (!Lit(&p, end, "}")) return nullptr;
    // The line ends here: '\n', "\r\n", or the end of the file (after an
    // optional '\r', as the general path strips one).
    if (p < end && *p == '\r') ++p;
    if (p == end || *p == '\n') return p;
    return nullptr;
  }

 private:
  // Consumes the literal if the text at *pp starts with it (a fixed-length
  // compare the compiler inlines).
  template <size_t N>
  static bool Lit(const char** pp, const char* end, const char (&literal)[N]) {
    if (end - *pp < static_cast<ptrdiff_t>(N - 1) ||
        !Equal<N - 1>(*pp, literal)) {
      return false;
    }
    *pp += N - 1;
    return true;
  }
  // The first `n` bytes of `a` and `b` are equal: word loads, the last one
  // overlapping (GCC calls memcmp past a few bytes).
  template <size_t n>
  static bool Equal(const char* a, const char* b) {
    if constexpr (n >= 8) {
      uint64_t diff = 0;
      for (size_t i = 0; i + 8 <= n; i += 8)
        diff |= Load<uint64_t>(a + i) ^ Load<uint64_t>(b + i);
      if constexpr (n % 8 != 0) {
        diff |= Load<uint64_t>(a + n - 8) ^ Load<uint64_t>(b + n - 8);
      }
      return diff == 0;
    } else if constexpr (n >= 4) {
      return ((Load<uint32_t>(a) ^ Load<uint32_t>(b)) |
              (Load<uint32_t>(a + n - 4) ^ Load<uint32_t>(b + n - 4))) == 0;
    } else if constexpr (n >= 2) {
      return ((Load<uint16_t>(a) ^ Load<uint16_t>(b)) |
              (Load<uint16_t>(a + n - 2) ^ Load<uint16_t>(b + n - 2))) == 0;
    } else {
      return n == 0 || a[0] == b[0];
    }
  }
  template <typename T>
  static T Load(const char* p) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
  }
  static bool IsDigit(char c) { return c >= '0' && c <= '9'; }
  // A string of printable ASCII without escapes.
  static bool String(const char** pp, const char* end, std::string_view* out) {
    const char* p = *pp;
    if (p >= end || *p != '"') return false;
    const char* start = ++p;
    p = FirstStopByte(p, end);
    if (p >= end || *p != '"') return false;
    *out = std::string_view(start, p - start);
    *pp = p + 1;
    return true;
  }
  // A finite number in [0, max] (or null when nullable: stays NaN), in the
  // plain non-negative shape of JSON's grammar: 0|[1-9][0-9]* then
  // optional .[0-9]+ and [eE][+-]?[0-9]+. One pass reads the digits and the
  // exponent; Clinger's fast path gives the value when the digits (without
  // the point) form an integer of at most 15 digits and the decimal
  // exponent is within +-22: that integer times or divided by an exact
  // power of ten, one correctly rounded operation on exact operands, so the
  // same double as a correctly rounded parse (from_chars, simdjson,
  // strtod), which takes every other number.
  static bool Number(const char** pp, const char* end, double max,
                     bool nullable, double* out) {
    static constexpr double kPow10[] = {
        1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    const char* const start = *pp;
    const char* p = start;
    if (nullable && Lit(&p, end, "null")) {
      *pp = p;
      return true;
    }
    if (p >= end || !IsDigit(*p)) return false;
    uint64_t v = 0;  // wraps past 19 digits: only used up to 15
    int digits = 0;
    int exp10 = 0;
    if (*p == '0') {
      ++p;
      digits = 1;
    } else {
      for (; p < end && IsDigit(*p); ++p, ++digits) v = v * 10 + (*p - '0');
    }
    if (p < end && *p == '.') {
      const char* d = ++p;
      for (; p < end && IsDigit(*p); ++p, ++digits, --exp10) {
        v = v * 10 + (*p - '0');
      }
      if (p == d) return false;
    }
    bool huge_exponent = false;
    if (p < end && (*p == 'e' || *p == 'E')) {
      ++p;
      bool negative = false;
      if (p < end && (*p == '+' || *p == '-')) negative = *p++ == '-';
      const char* d = p;
      int x = 0;
      for (; p < end && IsDigit(*p); ++p) {
        if (x <= 400) x = x * 10 + (*p - '0');
      }
      if (p == d) return false;
      huge_exponent = x > 400;
      exp10 += negative ? -x : x;
    }
    double d = 0;
    if (digits <= 15 && !huge_exponent && exp10 >= -22 && exp10 <= 22) {
      const double m = static_cast<double>(v);
      d = exp10 >= 0 ? m * kPow10[exp10] : m / kPow10[-exp10];
    } else {
      auto [q, ec] = std::from_chars(start, p, d);
      if (ec != std::errc() || q != p) return false;
    }
    if (!std::isfinite(d) || d < 0 || d > max) return false;
    *out = d;
    *pp = p;
    return true;
  }
  // A non-negative integer of at most 13 digits (1 TiB has 13), no leading
  // zero, within kMaxTraceResultSize.
  static bool Size(const char** pp, const char* end, uint64_t* out) {
    const char* p = *pp;
    const char* q = p;
    uint64_t v = 0;
    for (; q < end && IsDigit(*q); ++q) v = v * 10 + (*q - '0');
    const ptrdiff_t digits = q - p;
    if (digits == 0 || digits > 13 || (*p == '0' && digits > 1)) return false;
    if (q < end && (*q == '.' || *q == 'e' || *q == 'E')) return false;
    if (v > kMaxTraceResultSize) return false;
    *out = v;
    *pp = q;
    return true;
  }
};

class JsonlScanner {
 public:
  // Owned copies of a line's strings when simdjson's buffer would be reused.
  bool FastParse(const char* data, size_t len, size_t capacity,
                 RecordView* out) {
    namespace od = simdjson::ondemand;
    od::document doc;
    if (parser_.iterate(data, len, capacity).get(doc)) return false;
    od::object obj;
    if (doc.get_object().get(obj)) return false;
    uint32_t seen = 0;
    RecordView r;
    for (auto field : obj) {
      std::string_view key;
      if (field.unescaped_key().get(key)) return false;
      od::value v;
      if (field.value().get(v)) return false;
      uint32_t bit = 0;
      if (key == "tool") {
        bit = kTool;
        if (v.get_string().get(r.tool) || r.tool.empty()) return false;
      } else if (key == "arguments") {
        bit = kArguments;
        od::object a;
        std::string_view raw;
        if (v.get_object().get(a) || a.raw_json().get(raw)) return false;
        if (!Canonical(raw, &r.arguments)) return false;
      } else if (key == "result_size") {
        bit = kResultSize;
        if (v.get_uint64().get(r.result_size)) return false;
        if (r.result_size > kMaxTraceResultSize) return false;
      } else if (key == "session") {
        bit = kSession;
        if (v.get_string().get(r.session)) return false;
      } else if (key == "user") {
        bit = kUser;
        if (v.get_string().get(r.user)) return false;
      } else if (key == "tenant") {
        bit = kTenant;
        if (v.get_string().get(r.tenant)) return false;
      } else if (key == "result_digest") {
        bit = kResultDigest;
        if (v.get_string().get(r.result_digest)) return false;
      } else if (key == "time") {
        bit = kTime;
        if (!Number(v, kMaxTraceTimeSeconds, /*nullable=*/true, &r.time)) {
          return false;
        }
      } else if (key == "latency") {
        bit = kLatency;
        if (!Number(v, kMaxTraceLatencySeconds, false, &r.latency)) {
          return false;
        }
      } else if (key == "cost") {
        bit = kCost;
        if (!Number(v, kMaxTraceCost, false, &r.cost)) return false;
      } else if (key == "ttl") {
        bit = kTtl;
        if (!Number(v, std::numeric_limits<double>::max(), true, &r.ttl)) {
          return false;
        }
      } else if (key == "error") {
        bit = kError;
        if (v.get_bool().get(r.error)) return false;
      } else if (key == "request_type") {
        bit = kRequestType;
        bool null = false;
        if (v.is_null().get(null)) return false;
        if (!null) {
          std::string_view t;
          if (v.get_string().get(t)) return false;
          r.request_type = ParseRequestType(t);
          if (!r.request_type) return false;
        }
      } else {
        return false;  // "x_" extensions and unknown members: reference path
      }
      if (seen & bit) return false;
      seen |= bit;
    }
    // Trailing text after the object: a token still in bounds.
    const char* trailing = nullptr;
    if (!doc.current_location().get(trailing)) return false;
    if ((seen & (kTool | kArguments | kResultSize)) !=
        (kTool | kArguments | kResultSize)) {
      return false;
    }
    *out = r;
    return true;
  }

 private:
  // A finite number in [0, max] (or null when nullable: stays NaN).
  static bool Number(simdjson::ondemand::value& v, double max, bool nullable,
                     double* out) {
    bool null = false;
    if (nullable) {
      if (v.is_null().get(null)) return false;
      if (null) return true;
    }
    double d = 0;
    if (v.get_double().get(d)) return false;
    if (!std::isfinite(d) || d < 0 || d > max) return false;
    *out = d;
    return true;
  }

  // The canonical text of the arguments object `raw` (memoized).
  bool Canonical(std::string_view raw, std::string_view* out) {
    if (IsPlainCanonicalObject(raw)) {
      *out = raw;  // already RFC 8785 text: no parse, no copy
      return true;
    }
    if (auto it = memo_.find(raw); it != memo_.end()) {
      *out = it->second;
      return true;
    }
    nlohmann::json j = nlohmann::json::parse(raw, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return false;
    Result<std::string> c = trace_internal::CanonicalArguments(j);
    if (!c.ok()) return false;
    // Choice: bound the memo (a trace of only distinct arguments would
    // otherwise keep every text): start over past 2^20 texts.
    if (memo_.size() >= (size_t{1} << 20)) memo_.clear();
    auto [it, _] = memo_.emplace(std::string(raw), std::move(*c));
    *out = it->second;
    return true;
  }

  simdjson::ondemand::parser parser_;
  std::unordered_map<std::string, std::string, StringHash, std::equal_to<>>
      memo_;
};

// Reads the JSON Lines file at `path`, handing the records to `sink` in
// order, in groups (a group's views stay valid until the call returns).
Status ScanJsonl(const std::string& path, const Progress& progress,
                 const BatchSink& sink) {
  MappedFile f;
  if (Status s = f.Open(path); !s.ok()) return s;
  const uint64_t total = f.size();
  JsonlScanner scanner;
  std::vector<char> padded;  // a line with simdjson's padding (slow path)
  TraceRecord rec;           // a line the reference parser read
  // The records not yet handed over. Plain-path views point into the
  // mapping; a slow-path view points into `padded`, `rec` or simdjson's
  // buffers, which the next slow-path line reuses: it hands the group
  // over first.
  constexpr size_t kGroup = 64;
  RecordView group[kGroup];
  size_t pending = 0;
  auto flush = [&]() -> Status {
    const size_t n = pending;
    pending = 0;
    return n == 0 ? Status::Ok() : sink(std::span(group, n));
  };
  uint64_t line_no = 0, last_report = 0, last_release = 0;
  std::optional<bool> timed;
  double last_time = 0;
  const char* const base = f.data();
  const char* const end = base + total;
  for (const char* p = base; p < end;) {
    ++line_no;
    std::string reason;
    // The writer's own layout first; else find the line's end and read it
    // through the general plain scanner, simdjson or the reference parser.
    const char* nl = PlainLineScanner::ParseWriterLine(p, end, &group[pending]);
    const bool read = nl != nullptr;
    if (!read) {
      nl = static_cast<const char*>(std::memchr(p, '\n', end - p));
      if (nl == nullptr) nl = end;
    }
    size_t len = nl - p;
    if (len > 0 && p[len - 1] == '\r') --len;
    if (!read && !PlainLineScanner::Parse(p, len, &group[pending])) {
      const std::string_view line(p, len);
      if (line.find_first_not_of(" \t") == std::string_view::npos) {
        p = nl < end ? nl + 1 : end;  // a blank line
        continue;
      }
      if (Status s = flush(); !s.ok()) return s;
      RecordView& view = group[0];
      padded.assign(p, p + len);
      padded.resize(len + simdjson::SIMDJSON_PADDING);
      if (!scanner.FastParse(padded.data(), len, padded.size(), &view)) {
        rec = TraceRecord();
        reason = trace_internal::ParseTraceRecord(line, &rec);
        if (reason.empty() && !rec.server.empty()) {
          rec.tenant = ServerTenant(rec.server, rec.tenant);
        }
        if (reason.empty()) {
          view = {.time = rec.time,
                  .session = rec.session,
                  .user = rec.user,
                  .tenant = rec.tenant,
                  .tool = rec.tool,
                  .arguments = rec.arguments,
                  .result_size = rec.result_size,
                  .latency = rec.latency,
                  .cost = rec.cost,
                  .ttl = rec.ttl,
                  .error = rec.error,
                  .request_type = rec.request_type,
                  .result_digest = rec.result_digest};
        }
      }
    }
    const RecordView& view = group[pending];
    const bool has_time = !std::isnan(view.time);
    if (reason.empty() && timed.has_value() && *timed != has_time) {
      reason = has_time ? "'time' is present here but missing on earlier "
                          "records (all records or none carry 'time')"
                        : "'time' is missing here but present on earlier "
                          "records (all records or none carry 'time')";
    }
    if (reason.empty() && has_time && view.time < last_time) {
      reason = "'time' " + nlohmann::json(view.time).dump() +
               " is before the previous record's time " +
               nlohmann::json(last_time).dump();
    }
    if (!reason.empty()) {
      if (Status s = flush(); !s.ok()) return s;  // earlier records first
      return InvalidArgument(path + ":" + std::to_string(line_no) + ": " +
                             reason);
    }
    timed = has_time;
    if (has_time) last_time = view.time;
    if (++pending == kGroup) {
      if (Status s = flush(); !s.ok()) return s;
    }
    p = nl < end ? nl + 1 : end;
    const uint64_t consumed = p - base;
    if (consumed - last_release >= kReleaseEvery) {
      if (Status s = flush(); !s.ok()) return s;  // its views are in there
      f.Done(consumed);
      last_release = consumed;
      if (progress && consumed - last_report >= kProgressEvery) {
        progress(consumed, total);
        last_report = consumed;
      }
    }
  }
  if (Status s = flush(); !s.ok()) return s;
  if (progress) progress(total, total);
  return Status::Ok();
}

// ------------------------------------------------ libCacheSim formats

// Feeds a libCacheSim record (key as decimal or text) with the documented
// defaults.
class DefaultsFeeder {
 public:
  explicit DefaultsFeeder(const RecordSink& sink) : sink_(sink) {}
  Status Feed(double time, std::string_view key_json, uint64_t size) {
    args_.assign("{\"id\":").append(key_json).append("}");
    return sink_({.time = time,
                  .tool = "object",
                  .arguments = args_,
                  .result_size = size,
                  .latency = 1,
                  .cost = 0,
                  .ttl = std::numeric_limits<double>::infinity(),
                  .error = false,
                  .request_type = RequestType::kInformational});
  }

 private:
  const RecordSink& sink_;
  std::string args_;
};

// Size of one oracleGeneral record (libCacheSim: u32 time, u64 id, u32
// size, i64 next access).
constexpr size_t kOracleRecord = 24;

// The fields of oracleGeneral record `i` of a mapped file that toolcache
// reads (the next-access field is libCacheSim's own and unused here).
struct OracleRecord {
  uint32_t clock = 0;
  uint64_t id = 0;
  uint32_t size = 0;
};
inline OracleRecord DecodeOracle(const char* data, uint64_t i) {
  const char* r = data + i * kOracleRecord;
  OracleRecord o;
  std::memcpy(&o.clock, r, 4);
  std::memcpy(&o.id, r + 4, 8);
  std::memcpy(&o.size, r + 12, 4);
  return o;
}

// Maps an oracleGeneral file into `f`; a size that is not a whole number of
// records is an error naming the file.
Status MapOracleGeneral(const std::string& path, MappedFile* f) {
  if (Status s = f->Open(path); !s.ok()) return s;
  if (f->size() % kOracleRecord != 0) {
    return InvalidArgument(path + ": " + std::to_string(f->size()) +
                           " bytes is not a whole number of 24-byte "
                           "oracleGeneral records");
  }
  return Status::Ok();
}

Status ScanOracleGeneral(const std::string& path, const Progress& progress,
                         const RecordSink& sink) {
  MappedFile f;
  if (Status s = MapOracleGeneral(path, &f); !s.ok()) return s;
  DefaultsFeeder feed(sink);
  const uint64_t n = f.size() / kOracleRecord;
  char num[24];
  for (uint64_t i = 0; i < n; ++i) {
    PrefetchAhead(f.data() + i * kOracleRecord);
    const auto [clock, id, size] = DecodeOracle(f.data(), i);
    auto [e, ec] = std::to_chars(num, num + sizeof(num), id);
    (void)ec;
    if (Status s = feed.Feed(clock, std::string_view(num, e - num), size);
        !s.ok()) {
      return s;
    }
    if ((i & 0xffff) == 0xffff) {
      f.Done(i * kOracleRecord);
      if (progress) progress(i * kOracleRecord, f.size());
    }
  }
  if (progress) progress(f.size(), f.size());
  return Status::Ok();
}

// One libCacheSim CSV record (time,key,size). The key is either a decimal
// object id (`numeric`: digits without a leading zero that fit 64 bits --
// the same object as that id in oracleGeneral) or a text (`text`, valid
// UTF-8, a view into the mapped file).
struct CsvRecord {
  double time = 0;
  uint64_t size = 0;
  bool numeric = false;
  uint64_t id = 0;
  std::string_view text;
};

// The one key numbering of the id-keyed readers, shared by the full reads
// (ReadOracleGeneral, ReadCsv) and the light first passes (LightOracleTotals,
// LightCsvTotals) so they cannot drift: an object id goes through a flat
// id -> key table, a text key through a text -> key table, and both number
// keys from one counter in order of first appearance (a decimal key and a
// text key are never one object: `7`, `07` and `abc` are three).
class KeyNumbering {
 public:
  // The key of object id `id`, numbered if new; kFull when 2^32 - 1 keys
  // are already taken.
  static constexpr uint32_t kFull = FlatIdMap::kEmpty;
  [[gnu::always_inline]] uint32_t OfId(uint64_t id) {
    if (const uint32_t k = ids_.Find(id); k != FlatIdMap::kEmpty) [[likely]] {
      return k;
    }
    return NewId(id);
  }
  // The same for a text key.
  uint32_t OfText(std::string_view text) {
    if (auto it = texts_.find(text); it != texts_.end()) return it->second;
    if (next_ >= kFull) return kFull;
    const auto k = static_cast<uint32_t>(next_++);
    texts_.emplace(std::string(text), k);
    return k;
  }
  [[gnu::always_inline]] uint32_t Of(const CsvRecord& r) {
    return r.numeric ? OfId(r.id) : OfText(r.text);
  }
  uint64_t keys() const { return next_; }

 private:
  // Out of line: once per object.
  [[gnu::noinline]] uint32_t NewId(uint64_t id) {
    if (next_ >= kFull) return kFull;
    const auto k = static_cast<uint32_t>(next_++);
    ids_.Insert(id, k);
    return k;
  }
  FlatIdMap ids_;
  std::unordered_map<std::string, uint32_t, StringHash, std::equal_to<>> texts_;
  uint64_t next_ = 0;
};

// Reads a libCacheSim CSV file record by record, mapped, with no copy of
// a line. Each line is first read by a one-pass scanner for the commonest
// shape (digits,digits,digits: integer time of at most 15 digits, decimal
// key, size of at most 19 digits), which accepts a subset of what the
// general path accepts with the same values; any other line (the header,
// blank lines, text keys, fractions, errors) takes the general path, whose
// verdict and message win. A last line without '\n' counts.
class CsvScanner {
 public:
  explicit CsvScanner(const std::string& path) : path_(path) {}

  Status Open() {
    if (Status s = f_.Open(path_); !s.ok()) return s;
    at_ = f_.data();
    end_ = f_.data() + f_.size();
    return Status::Ok();
  }
  uint64_t total() const { return f_.size(); }
  uint64_t consumed() const { return static_cast<uint64_t>(at_ - f_.data()); }

  // The next record into *out; *done at the end of the file. An error
  // names the file and line.
  Status Next(CsvRecord* out, bool* done) {
    while (at_ < end_) {
      ++line_no_;
      if ((line_no_ & 0xffff) == 0) f_.Done(consumed());
      if (const char* next = Plain(at_, end_, out); next != nullptr) {
        at_ = next;
        *done = false;
        return Status::Ok();
      }
      bool skip = false;
      if (Status s = General(out, &skip); !s.ok()) return s;
      if (!skip) {
        *done = false;
        return Status::Ok();
      }
    }
    *done = true;
    return Status::Ok();
  }

 private:
  static bool IsDigit(char c) { return c >= '0' && c <= '9'; }
  // Digits at *pp (1 to max_digits of them) as an integer.
  static bool Digits(const char** pp, const char* end, int max_digits,
                     uint64_t* out) {
    const char* p = *pp;
    uint64_t v = 0;
    const char* const stop = end - p > max_digits ? p + max_digits : end;
    while (p < stop && IsDigit(*p))
      v = v * 10 + static_cast<uint64_t>(*p++ - '0');
    if (p == *pp || (p < end && IsDigit(*p)))
      return false;  // none, or too many
    *out = v;
    *pp = p;
    return true;
  }

  // The plain shape (see the class comment): returns the next line's start,
  // or nullptr to let General read the line. A time of at most 15 digits is
  // an exact double, as from_chars gives it; an id of at most 19 digits and
  // a size of at most 19 digits fit 64 bits.
  const char* Plain(const char* p, const char* end, CsvRecord* out) {
    uint64_t t = 0, id = 0, size = 0;
    if (!Digits(&p, end, 15, &t) || p == end || *p++ != ',') return nullptr;
    const char* k = p;
    if (!Digits(&p, end, 19, &id) || (p - k > 1 && *k == '0') || p == end ||
        *p++ != ',') {
      return nullptr;
    }
    if (!Digits(&p, end, 19, &size)) return nullptr;
    if (p < end && *p == '\r') ++p;
    if (p < end && *p++ != '\n') return nullptr;
    const double time = static_cast<double>(t);
    if (time > kMaxTraceTimeSeconds || time < last_time_) return nullptr;
    last_time_ = time;
    *out = {.time = time, .size = size, .numeric = true, .id = id};
    return p;
  }

  Status Bad(const std::string& why) const {
    return InvalidArgument(path_ + ":" + std::to_string(line_no_) + ": " + why +
                           " (libCacheSim CSV: time,key,size)");
  }

  // The line at at_, whatever its shape; *skip for the header and blank
  // lines.
  Status General(CsvRecord* out, bool* skip) {
    const char* nl = static_cast<const char*>(
        std::memchr(at_, '\n', static_cast<size_t>(end_ - at_)));
    const char* line_end = nl != nullptr ? nl : end_;
    std::string_view line(at_, static_cast<size_t>(line_end - at_));
    at_ = nl != nullptr ? nl + 1 : end_;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    *skip = true;
    if (line.find_first_not_of(" \t") == std::string_view::npos) {
      return Status::Ok();
    }
    const size_t c1 = line.find(',');
    const size_t c2 =
        c1 == std::string_view::npos ? c1 : line.find(',', c1 + 1);
    if (c2 == std::string_view::npos ||
        line.find(',', c2 + 1) != std::string_view::npos) {
      return Bad("expected 3 comma-separated columns");
    }
    std::string_view t(line.data(), c1), k(line.data() + c1 + 1, c2 - c1 - 1),
        s(line.data() + c2 + 1, line.size() - c2 - 1);
    if (line_no_ == 1 && t == "time") return Status::Ok();  // the header
    double time = 0;
    uint64_t size = 0;
    auto [tp, te] = std::from_chars(t.data(), t.data() + t.size(), time);
    auto [sp, se] = std::from_chars(s.data(), s.data() + s.size(), size);
    if (te != std::errc() || tp != t.data() + t.size() || !(time >= 0) ||
        time > kMaxTraceTimeSeconds) {
      return Bad("time '" + std::string(t) + "' is not a number in [0, 1e12]");
    }
    if (time < last_time_) return Bad("time goes backwards");
    last_time_ = time;
    if (se != std::errc() || sp != s.data() + s.size()) {
      return Bad("size '" + std::string(s) + "' is not a non-negative integer");
    }
    if (k.empty()) return Bad("empty key");
    *out = {.time = time, .size = size};
    auto [kp, ke] = std::from_chars(k.data(), k.data() + k.size(), out->id);
    out->numeric = ke == std::errc() && kp == k.data() + k.size() &&
                   (k.size() == 1 || k[0] != '0');
    if (!out->numeric) {
      if (!simdjson::validate_utf8(k.data(), k.size())) {
        return Bad("key is not valid UTF-8");
      }
      out->text = k;
    }
    *skip = false;
    return Status::Ok();
  }

  const std::string path_;
  MappedFile f_;
  const char* at_ = nullptr;
  const char* end_ = nullptr;
  uint64_t line_no_ = 0;
  double last_time_ = 0;
};

Status ScanCsv(const std::string& path, const Progress& progress,
               const RecordSink& sink) {
  CsvScanner csv(path);
  if (Status st = csv.Open(); !st.ok()) return st;
  DefaultsFeeder feed(sink);
  std::string key_json;
  uint64_t last = 0;
  CsvRecord r;
  for (bool done = false;;) {
    if (Status st = csv.Next(&r, &done); !st.ok()) return st;
    if (done) break;
    if (r.numeric) {
      key_json = std::to_string(r.id);  // the same object as in oracle
    } else {
      key_json = nlohmann::json(std::string(r.text)).dump();
    }
    if (Status st = feed.Feed(r.time, key_json, r.size); !st.ok()) return st;
    if (progress && csv.consumed() - last >= kProgressEvery) {
      progress(csv.consumed(), csv.total());
      last = csv.consumed();
    }
  }
  if (progress) progress(csv.total(), csv.total());
  return Status::Ok();
}

Status ScanText(const std::string& path, TraceFormat format,
                const Progress& progress, const RecordSink& sink) {
  switch (format) {
    case TraceFormat::kJsonl:
      return ScanJsonl(path, progress, [&](std::span<const RecordView> rs) {
        for (const RecordView& r : rs) {
          if (Status s = sink(r); !s.ok()) return s;
        }
        return Status::Ok();
      });
    case TraceFormat::kOracleGeneral:
      return ScanOracleGeneral(path, progress, sink);
    case TraceFormat::kCsv:
      return ScanCsv(path, progress, sink);
    default:
      return InvalidArgument("not a record-by-record format");
  }
}

// --------------------------------------------------------------- binary

// Streaming (StreamPreparedTrace): set on the builder before any record.
struct Streaming {
  uint64_t chunk_records = 0;
  TraceBuilder::ChunkSink sink;
  TraceBuilder::StreamContent content = TraceBuilder::StreamContent::kAll;
};

// Maps a binary trace into `f` and checks its header into `h`.
Status MapBinary(const std::string& path, MappedFile* fp, BinHeader* hp) {
  MappedFile& f = *fp;
  if (Status s = f.Open(path); !s.ok()) return s;
  BinHeader& h = *hp;
  if (f.size() < kHeaderSize) {
    return InvalidArgument(path + ": too short for a toolcache binary trace");
  }
  std::memcpy(&h, f.data(), kHeaderSize);
  if (std::memcmp(h.magic, kMagic, 8) != 0) {
    return InvalidArgument(path + ": not a toolcache binary trace");
  }
  if (h.version != kVersion || h.record_size != kRecordSize) {
    return InvalidArgument(path + ": binary trace version " +
                           std::to_string(h.version) + " / record size " +
                           std::to_string(h.record_size) +
                           " not supported (this build reads version 1, 88)");
  }
  if (h.record_count > (f.size() - kHeaderSize) / kRecordSize ||
      h.strings_offset != kHeaderSize + h.record_count * kRecordSize ||
      h.strings_offset + h.strings_size != f.size() ||
      h.key_count > h.record_count) {
    return InvalidArgument(path + ": corrupt binary trace header");
  }
  return Status::Ok();
}

Result<PreparedTrace> ReadBinary(const std::string& path,
                                 const TraceReadOptions& options,
                                 const Streaming* stream) {
  MappedFile f;
  BinHeader h{};
  if (Status s = MapBinary(path, &f, &h); !s.ok()) return s;
  TraceBuilder b(Stem(path), options.prepare,
                 stream != nullptr ? 0 : h.record_count, h.key_count);
  if (stream != nullptr)
    b.StreamChunks(stream->chunk_records, stream->sink, stream->content);
  const char* base = f.data() + kHeaderSize;
  for (uint64_t i = 0; i < h.record_count; ++i) {
    BinRecord r;
    PrefetchAhead(base + i * kRecordSize);
    std::memcpy(&r, base + i * kRecordSize, kRecordSize);
    // Ids are dense in order of first appearance: record i can name at most
    // i earlier ones (+1 for the tables whose id 0 is the empty string), so
    // a corrupt id can never size an array beyond the trace.
    if (r.key > i || r.session > i || r.user > i + 1 || r.tool > i + 1 ||
        r.digest > i + 1 || r.tenant > i + 1) {
      return InvalidArgument(path + ": record " + std::to_string(i + 1) +
                             ": an id beyond the records before it (the file "
                             "is corrupt)");
    }
    if (r.type > 2 || r.error > 1) {
      return InvalidArgument(path + ": record " + std::to_string(i + 1) +
                             ": corrupt type/error byte");
    }
    if (!(r.ttl >= 0) && !std::isnan(r.ttl)) {
      return InvalidArgument(path + ": record " + std::to_string(i + 1) +
                             ": negative TTL");
    }
    InternedRecord q{.key = r.key,
                     .param_category = r.param_category,
                     .tool = r.tool,
                     .user = r.user,
                     .session = r.session,
                     .digest = r.digest,
                     .result_size = r.size,
                     .latency = r.latency,
                     .cost = r.cost,
                     .ttl = r.ttl,
                     .time = r.time,
                     .error = r.error != 0};
    if (r.type == 1) q.request_type = RequestType::kInformational;
    if (r.type == 2) q.request_type = RequestType::kCommand;
    if (Status s = b.AddInterned(q); !s.ok()) return s;
    if ((i & 0x3fff) == 0x3fff) {  // every 1.4 MiB
      f.Done(kHeaderSize + i * kRecordSize);
      if (options.progress) {
        options.progress(kHeaderSize + i * kRecordSize, f.size());
      }
    }
  }
  if (options.progress) options.progress(f.size(), f.size());
  return std::move(b).Finish();
}

// Interns a record stream into binary records.
class BinaryWriter {
 public:
  explicit BinaryWriter(std::FILE* out) : out_(out), features_(Config{}) {
    tools_.emplace("", 0);  // unused: tools are 1-based
    users_.emplace("", 0);
    tenants_.emplace("", 0);
    digests_.emplace("", 0);
    tool_names_.push_back("");
    user_names_.push_back("");
    tenant_names_.push_back("");
    digest_names_.push_back("");
  }

  Status Add(const RecordView& r) {
    if (r.tool.empty()) return InvalidArgument("empty tool name");
    BinRecord b{};
    b.tool = Intern(tools_, tool_names_, r.tool);
    b.tenant = Intern(tenants_, tenant_names_, r.tenant);
    // The key: (tenant id, tool id, arguments), as TraceBuilder::Add
    // identifies objects (ids, so no name can forge a separator).
    key_buf_.assign(reinterpret_cast<const char*>(&b.tenant), 4)
        .append(reinterpret_cast<const char*>(&b.tool), 4)
        .append(r.arguments);
    auto it = keys_.find(key_buf_);
    if (it == keys_.end()) {
      Result<RequestFeatures> f =
          features_.Build({.tool = r.tool, .arguments_json = r.arguments});
      if (!f.ok()) return f.status();
      it = keys_.emplace(key_buf_, categories_.size()).first;
      categories_.push_back(f->category_feature);
    }
    b.key = it->second;
    b.param_category = categories_[b.key];
    b.size = r.result_size;
    b.latency = r.latency;
    b.cost = r.cost;
    b.ttl = r.ttl;
    b.time = r.time;
    b.next_access = kNoNextAccess;
    b.user = Intern(users_, user_names_, r.user);
    b.session = Intern(sessions_, session_names_, r.session);
    b.digest = Intern(digests_, digest_names_, r.result_digest);
    b.type = !r.request_type.has_value()                      ? 0
             : *r.request_type == RequestType::kInformational ? 1
                                                              : 2;
    b.error = r.error;
    NotePlain(b);
    key_seq_.push_back(b.key);
    if (std::fwrite(&b, kRecordSize, 1, out_) != 1) {
      return Unavailable("write error");
    }
    return Status::Ok();
  }

  // Writes the string tables and the header; returns the record count.
  Result<uint64_t> Finish(int fd) {
    std::string strings;
    for (const auto* table : {&tool_names_, &user_names_, &session_names_,
                              &tenant_names_, &digest_names_}) {
      const uint64_t count = table->size();
      strings.append(reinterpret_cast<const char*>(&count), 8);
      for (const std::string& s : *table) {
        const uint32_t len = static_cast<uint32_t>(s.size());
        strings.append(reinterpret_cast<const char*>(&len), 4).append(s);
      }
    }
    const uint64_t n = key_seq_.size();
    BinHeader h{};
    std::memcpy(h.magic, kMagic, 8);
    h.version = kVersion;
    h.record_size = kRecordSize;
    h.record_count = n;
    h.key_count = categories_.size();
    h.strings_offset = kHeaderSize + n * kRecordSize;
    h.strings_size = strings.size();
    if (n > 0 && plain_ && plain_total_ < kPlainDeclared) {
      h.plain_unique = plain_unique_;
      h.plain_total = plain_total_ | kPlainDeclared;
    }
    if (std::fwrite(strings.data(), 1, strings.size(), out_) !=
            strings.size() ||
        std::fflush(out_) != 0) {
      return Unavailable("write error");
    }
    if (pwrite(fd, &h, kHeaderSize, 0) != static_cast<ssize_t>(kHeaderSize)) {
      return Unavailable("write error");
    }
    // The next-access index, patched in place through a mapping.
    if (n > 0) {
      const size_t bytes = kHeaderSize + n * kRecordSize;
      void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (m == MAP_FAILED) return Unavailable("cannot mmap the output");
      char* recs = static_cast<char*>(m) + kHeaderSize;
      std::vector<uint64_t> next(categories_.size(), kNoNextAccess);
      for (uint64_t i = n; i-- > 0;) {
        std::memcpy(recs + i * kRecordSize + 56, &next[key_seq_[i]], 8);
        next[key_seq_[i]] = i;
      }
      munmap(m, bytes);
    }
    return n;
  }

 private:
  using Map =
      std::unordered_map<std::string, uint32_t, StringHash, std::equal_to<>>;
  static uint32_t Intern(Map& map, std::vector<std::string>& names,
                         std::string_view s) {
    if (auto it = map.find(s); it != map.end()) return it->second;
    const uint32_t id = static_cast<uint32_t>(names.size());
    map.emplace(std::string(s), id);
    names.emplace_back(s);
    return id;
  }

  // Keeps the plain declaration (BinHeader::plain_*) up to date.
  void NotePlain(const BinRecord& b) {
    if (key_seq_.empty()) {
      first_ = b;
      plain_ = b.type == 1 && b.error == 0 && b.digest == 0 &&
               (b.ttl >= 0 || std::isnan(b.ttl));
    }
    if (b.size > kMaxTraceResultSize || b.key > plain_keys_) {
      plain_ = false;
    } else if (plain_ && !SamePlainFields(b, first_)) {
      plain_ = false;
    }
    const uint64_t q_size = std::max<uint64_t>(1, b.size);
    plain_total_ += q_size;
    if (b.key == plain_keys_) {  // keys are numbered as they first appear
      ++plain_keys_;
      plain_unique_ += q_size;
    }
  }

  std::FILE* out_;
  BinRecord first_{};
  bool plain_ = false;
  uint64_t plain_keys_ = 0, plain_unique_ = 0, plain_total_ = 0;
  FeatureBuilder features_;
  std::unordered_map<std::string, uint64_t, StringHash, std::equal_to<>> keys_;
  std::vector<uint64_t> categories_;
  std::vector<uint64_t> key_seq_;
  Map tools_, users_, sessions_, tenants_, digests_;
  std::vector<std::string> tool_names_, user_names_, session_names_,
      tenant_names_, digest_names_;
  std::string key_buf_;
};

// Records to reserve room for: exact for oracleGeneral, else estimated from
// the first MiB (lines per byte), with 25 % headroom. Reserved pages that
// are never written cost no RSS; growing by doubling would copy and hold
// both arrays for a moment.
uint64_t ExpectedRecords(const std::string& path, TraceFormat format) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 || st.st_size <= 0) return 0;
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (format == TraceFormat::kOracleGeneral) return size / 24;
  std::ifstream in(path, std::ios::binary);
  std::string head(std::min<uint64_t>(size, uint64_t{1} << 20), '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  const uint64_t got = static_cast<uint64_t>(in.gcount());
  const uint64_t lines = std::count(head.begin(), head.begin() + got, '\n');
  if (got == 0 || lines == 0) return 0;
  return size * lines / got * 5 / 4 + 16;
}

}  // namespace

namespace jsonl_internal {

const char* ScanWriterLine(const char* p, const char* end, RecordView* out) {
  return PlainLineScanner::ParseWriterLine(p, end, out);
}

bool ScanPlainLine(const char* p, size_t len, RecordView* out) {
  return PlainLineScanner::Parse(p, len, out);
}

}  // namespace jsonl_internal

Result<TraceFormat> ParseTraceFormat(std::string_view name) {
  if (name == "auto") return TraceFormat::kAuto;
  if (name == "jsonl") return TraceFormat::kJsonl;
  if (name == "bin") return TraceFormat::kBinary;
  if (name == "oracle-general" || name == "oracleGeneral") {
    return TraceFormat::kOracleGeneral;
  }
  if (name == "csv") return TraceFormat::kCsv;
  return InvalidArgument("unknown trace format '" + std::string(name) +
                         "' (known: auto, jsonl, bin, oracle-general, csv)");
}

std::string_view TraceFormatName(TraceFormat format) {
  switch (format) {
    case TraceFormat::kAuto:
      return "auto";
    case TraceFormat::kJsonl:
      return "jsonl";
    case TraceFormat::kBinary:
      return "bin";
    case TraceFormat::kOracleGeneral:
      return "oracle-general";
    case TraceFormat::kCsv:
      return "csv";
  }
  return "?";
}

Result<TraceFormat> DetectTraceFormat(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot open trace file");
  char magic[8] = {};
  in.read(magic, 8);
  if (in.gcount() == 8 && std::memcmp(magic, kMagic, 8) == 0) {
    return TraceFormat::kBinary;
  }
  const std::string base = path.substr(path.find_last_of('/') + 1);
  if (base.find(".oracleGeneral") != std::string::npos) {
    return TraceFormat::kOracleGeneral;
  }
  if (base.size() > 4 && base.ends_with(".csv")) return TraceFormat::kCsv;
  return TraceFormat::kJsonl;
}

namespace {

// oracleGeneral straight to AddInterned: each object id gets a dense key
// in order of first appearance (a flat id -> key table), so no key text is
// built or hashed per record. The same PreparedTrace as the text path
// (ScanOracleGeneral + Add: tool "object", arguments {"id": <id>}, one
// member so no parameter category, the DefaultsFeeder defaults) --
// ZipfMissCountsArePinnedAndEqualAcrossFormats compares it with the CSV's.
Result<PreparedTrace> ReadOracleGeneral(const std::string& path,
                                        const TraceReadOptions& options,
                                        const Streaming* stream) {
  MappedFile f;
  if (Status s = MapOracleGeneral(path, &f); !s.ok()) return s;
  const uint64_t n = f.size() / kOracleRecord;
  TraceBuilder b(Stem(path), options.prepare, stream != nullptr ? 0 : n,
                 TraceBuilder::kGrowingKeys);
  if (stream != nullptr) {
    b.StreamChunks(stream->chunk_records, stream->sink, stream->content);
  }
  KeyNumbering keys;
  for (uint64_t i = 0; i < n; ++i) {
    PrefetchAhead(f.data() + i * kOracleRecord);
    const auto [clock, id, size] = DecodeOracle(f.data(), i);
    const uint32_t key = keys.OfId(id);
    if (key == KeyNumbering::kFull) {
      return InvalidArgument(path + ": more than 2^32 - 1 objects");
    }
    const InternedRecord q{.key = key,
                           .result_size = size,
                           .latency = 1,
                           .cost = 0,
                           .ttl = std::numeric_limits<double>::infinity(),
                           .time = static_cast<double>(clock),
                           .request_type = RequestType::kInformational};
    if (Status s = b.AddInterned(q); !s.ok()) return s;
    if ((i & 0xffff) == 0xffff) {
      f.Done(i * kOracleRecord);
      if (options.progress) options.progress(i * kOracleRecord, f.size());
    }
  }
  if (options.progress) options.progress(f.size(), f.size());
  return std::move(b).Finish();
}

// CSV straight to AddInterned, as ReadOracleGeneral: a decimal key is an
// object id (the flat id -> key table), a text key goes through a text ->
// key table, and both number their keys from one counter in order of first
// appearance -- one object space, so the PreparedTrace is the text path's
// (ScanCsv + Add: {"id": 7} and {"id": "7"} are two objects, "7" and "07"
// too). CsvKeysShareOneObjectSpaceWithTheTextPath compares them.
Result<PreparedTrace> ReadCsv(const std::string& path,
                              const TraceReadOptions& options,
                              const Streaming* stream) {
  CsvScanner csv(path);
  if (Status s = csv.Open(); !s.ok()) return s;
  TraceBuilder b(
      Stem(path), options.prepare,
      stream != nullptr ? 0 : ExpectedRecords(path, TraceFormat::kCsv),
      TraceBuilder::kGrowingKeys);
  if (stream != nullptr) {
    b.StreamChunks(stream->chunk_records, stream->sink, stream->content);
  }
  KeyNumbering keys;
  uint64_t last = 0;
  CsvRecord r;
  for (bool done = false;;) {
    if (Status s = csv.Next(&r, &done); !s.ok()) return s;
    if (done) break;
    const uint32_t key = keys.Of(r);
    if (key == KeyNumbering::kFull) {
      return InvalidArgument(path + ": more than 2^32 - 1 objects");
    }
    const InternedRecord q{.key = key,
                           .result_size = r.size,
                           .latency = 1,
                           .cost = 0,
                           .ttl = std::numeric_limits<double>::infinity(),
                           .time = r.time,
                           .request_type = RequestType::kInformational};
    if (Status s = b.AddInterned(q); !s.ok()) return s;
    if (options.progress && csv.consumed() - last >= kProgressEvery) {
      options.progress(csv.consumed(), csv.total());
      last = csv.consumed();
    }
  }
  if (options.progress) options.progress(csv.total(), csv.total());
  return std::move(b).Finish();
}

Result<PreparedTrace> ReadWith(const std::string& path,
                               const TraceReadOptions& options,
                               const Streaming* stream) {
  TraceFormat format = options.format;
  if (format == TraceFormat::kAuto) {
    Result<TraceFormat> f = DetectTraceFormat(path);
    if (!f.ok()) return f.status();
    format = *f;
  }
  if (format == TraceFormat::kBinary) return ReadBinary(path, options, stream);
  if (format == TraceFormat::kOracleGeneral) {
    return ReadOracleGeneral(path, options, stream);
  }
  if (format == TraceFormat::kCsv) return ReadCsv(path, options, stream);
  const uint64_t expected =
      stream != nullptr ? 0 : ExpectedRecords(path, format);
  TraceBuilder b(Stem(path), options.prepare, expected);
  if (stream != nullptr)
    b.StreamChunks(stream->chunk_records, stream->sink, stream->content);
  Status s = format == TraceFormat::kJsonl
                 ? ScanJsonl(path, options.progress,
                             [&](std::span<const RecordView> rs) {
                               return b.AddBatch(rs);
                             })
                 : ScanText(path, format, options.progress,
                            [&](const RecordView& r) { return b.Add(r); });
  if (!s.ok()) return s;
  return std::move(b).Finish();
}

}  // namespace

Result<PreparedTrace> ReadPreparedTrace(const std::string& path,
                                        const TraceReadOptions& options) {
  return ReadWith(path, options, nullptr);
}

Result<TraceTotals> StreamPreparedTrace(const std::string& path,
                                        const TraceReadOptions& options,
                                        uint64_t chunk_records,
                                        const TraceBuilder::ChunkSink& sink,
                                        TraceBuilder::StreamContent content) {
  uint64_t records = 0;
  const Streaming stream{
      .chunk_records = chunk_records,
      .sink = [&](const PreparedTrace& chunk, uint64_t first) -> Status {
        records = first + chunk.records;
        return sink(chunk, first);
      },
      .content = content};
  Result<PreparedTrace> p = ReadWith(path, options, &stream);
  if (!p.ok()) return p.status();
  TraceTotals t = TotalsOf(*p);
  t.records = records;
  return t;
}

namespace {

// The light first pass (ScanTraceTotals): what TraceBuilder::Finish and
// CountCommands would report, counted straight from the records under the
// global scope (an object is its key, numbered as it first appears).
class TotalsCounter {
 public:
  TotalsCounter(std::string name, const PrepareOptions& options,
                std::vector<uint64_t>* commands)
      : options_(options), commands_(commands) {
    t_.name = std::move(name);
  }
  // REQUIRES: key < keys already added + 1.
  [[gnu::always_inline]] void Add(uint64_t key, uint64_t size, uint32_t session,
                                  RecordClass c) {
    if (key == seen_.size()) seen_.push_back(0);
    const uint64_t q_size = std::max<uint64_t>(1, size);
    ++t_.records;
    t_.total_bytes += q_size;
    if (c.cacheable && seen_[key] == 0) {
      seen_[key] = 1;
      ++t_.unique_cacheable_objects;
      t_.unique_cacheable_bytes += q_size;
    }
    t_.session_count = std::max(t_.session_count, session + 1);
    if (c.command) {
      if (session >= commands_->size()) commands_->resize(session + 1, 0);
      ++(*commands_)[session];
    }
  }
  // Binary keys may skip ids (dense in the writer's files, not checked):
  // the builder counts objects as they appear.
  void AddSparse(uint64_t key, uint64_t size, uint32_t session, RecordClass c) {
    if (key >= seen_.size()) seen_.resize(key + 1, 2);
    if (seen_[key] == 2) {
      seen_[key] = 0;
      ++objects_;
    }
    Add(key, size, session, c);
  }
  const PrepareOptions& options() const { return options_; }
  uint64_t keys() const { return seen_.size(); }
  uint64_t records() const { return t_.records; }
  TraceTotals Done(bool sparse) {
    t_.objects = sparse ? objects_ : seen_.size();
    return std::move(t_);
  }

 private:
  const PrepareOptions& options_;
  std::vector<uint64_t>* commands_;
  TraceTotals t_;
  std::vector<uint8_t> seen_;  // per key: 1 counted as unique cacheable
  uint64_t objects_ = 0;
};

// Each light pass returns false when it does not vouch for the file (any
// error, anything the full read would refuse): the caller then runs it.
bool LightBinaryTotals(const std::string& path, const TraceReadOptions& o,
                       TotalsCounter* count,
                       std::optional<PlainConstants>* plain) {
  MappedFile f;
  BinHeader h{};
  if (!MapBinary(path, &f, &h).ok()) return false;
  if (h.record_count >= PreparedTrace::kNone) return false;
  const char* base = f.data() + kHeaderSize;
  // Whether every record is plain (PlainConstants), against the first.
  BinRecord first{};
  if (h.record_count > 0) std::memcpy(&first, base, kRecordSize);
  const RecordClass first_class =
      ClassifyRecord(count->options(), RequestType::kInformational, first.ttl);
  bool all_plain = h.record_count > 0 && first.type == 1 && first.error == 0 &&
                   first.digest == 0 && first_class.cacheable;
  for (uint64_t i = 0; i < h.record_count; ++i) {
    BinRecord r;
    PrefetchAhead(base + i * kRecordSize);
    std::memcpy(&r, base + i * kRecordSize, kRecordSize);
    if (i > 0 && all_plain && SamePlainFields(r, first)) [[likely]] {
      // The full checks passed on record 0, whose ids, type, error, TTL,
      // latency and cost this record shares (an id's bound only grows with
      // i): what is left is the key, the tenant, the size and the clock.
      if (r.key > i || r.key >= h.key_count || r.tenant > i + 1 ||
          !InTraceBounds(r.size, first.latency, first.cost, r.time)) {
        return false;
      }
      count->AddSparse(r.key, r.size, r.session, first_class);
      if ((i & 0x3fff) == 0x3fff) {
        f.Done(kHeaderSize + i * kRecordSize);
        if (o.progress) o.progress(kHeaderSize + i * kRecordSize, f.size());
      }
      continue;
    }
    all_plain = all_plain && SamePlainFields(r, first);
    // ReadBinary's and AddInterned's checks, in one test.
    if (r.key > i || r.key >= h.key_count || r.session > i || r.user > i + 1 ||
        r.tool > i + 1 || r.digest > i + 1 || r.tenant > i + 1 || r.tool == 0 ||
        r.type > 2 || r.error > 1 || (!(r.ttl >= 0) && !std::isnan(r.ttl)) ||
        !InTraceBounds(r.size, r.latency, r.cost, r.time)) {
      return false;
    }
    std::optional<RequestType> type;
    if (r.type == 1) type = RequestType::kInformational;
    if (r.type == 2) type = RequestType::kCommand;
    count->AddSparse(r.key, r.size, r.session,
                     ClassifyRecord(count->options(), type, r.ttl));
    if ((i & 0x3fff) == 0x3fff) {
      f.Done(kHeaderSize + i * kRecordSize);
      if (o.progress) o.progress(kHeaderSize + i * kRecordSize, f.size());
    }
  }
  if (o.progress) o.progress(f.size(), f.size());
  if (all_plain) {
    *plain = PlainConstants{.tool = first.tool,
                            .user = first.user,
                            .session = first.session,
                            .param_category = first.param_category,
                            .latency = first.latency,
                            .cost = first.cost,
                            .ttl = first_class.ttl,
                            .ttl_bits = std::bit_cast<uint64_t>(first.ttl)};
  }
  return true;
}

// A binary trace whose header declares it plain (BinHeader::plain_*):
// the totals come from the header and record 0 (checked as the light pass
// checks it), with no pass over the records; StreamPlainTrace then checks
// every record against the declaration. False (the caller reads the file)
// when there is no declaration or record 0 does not make the trace plain
// under `o` (not cacheable).
bool DeclaredBinaryTotals(const std::string& path, const TraceReadOptions& o,
                          TraceTotals* t,
                          std::optional<PlainConstants>* plain) {
  MappedFile f;
  BinHeader h{};
  if (!MapBinary(path, &f, &h).ok()) return false;
  if ((h.plain_total & kPlainDeclared) == 0 || h.record_count == 0 ||
      h.record_count >= PreparedTrace::kNone || h.key_count == 0) {
    return false;
  }
  const uint64_t total = h.plain_total & ~kPlainDeclared;
  if (h.plain_unique > total || total < h.record_count) return false;
  BinRecord r{};
  std::memcpy(&r, f.data() + kHeaderSize, kRecordSize);
  const RecordClass c =
      ClassifyRecord(o.prepare, RequestType::kInformational, r.ttl);
  if (r.key != 0 || r.session != 0 || r.user > 1 || r.tool != 1 ||
      r.tenant > 1 || r.type != 1 || r.error != 0 || r.digest != 0 ||
      (!(r.ttl >= 0) && !std::isnan(r.ttl)) ||
      !InTraceBounds(r.size, r.latency, r.cost, r.time) || !c.cacheable) {
    return false;
  }
  *plain = PlainConstants{.tool = r.tool,
                          .user = r.user,
                          .session = r.session,
                          .param_category = r.param_category,
                          .latency = r.latency,
                          .cost = r.cost,
                          .ttl = c.ttl,
                          .ttl_bits = std::bit_cast<uint64_t>(r.ttl),
                          .declared = true};
  t->name = Stem(path);
  t->records = h.record_count;
  t->objects = h.key_count;
  t->session_count = 1;
  t->unique_cacheable_objects = h.key_count;
  t->unique_cacheable_bytes = h.plain_unique;
  t->total_bytes = total;
  if (o.progress) o.progress(f.size(), f.size());
  return true;
}

// oracleGeneral and CSV: every record INFORMATIONAL, never expiring, one
// session (ReadOracleGeneral / ReadCsv).
bool LightOracleTotals(const std::string& path, const TraceReadOptions& o,
                       TotalsCounter* count,
                       std::optional<PlainConstants>* plain) {
  MappedFile f;
  if (!MapOracleGeneral(path, &f).ok()) return false;
  const uint64_t n = f.size() / kOracleRecord;
  if (n >= PreparedTrace::kNone) return false;
  const RecordClass c =
      ClassifyRecord(count->options(), RequestType::kInformational,
                     std::numeric_limits<double>::infinity());
  KeyNumbering keys;
  for (uint64_t i = 0; i < n; ++i) {
    PrefetchAhead(f.data() + i * kOracleRecord);
    const OracleRecord rec = DecodeOracle(f.data(), i);
    const uint32_t key = keys.OfId(rec.id);
    if (key == KeyNumbering::kFull) return false;
    count->Add(key, rec.size, 0, c);
    if ((i & 0xffff) == 0xffff) {
      f.Done(i * kOracleRecord);
      if (o.progress) o.progress(i * kOracleRecord, f.size());
    }
  }
  if (o.progress) o.progress(f.size(), f.size());
  // ReadOracleGeneral's constants (latency 1, cost 0, never expires).
  if (n > 0 && c.cacheable) {
    *plain = PlainConstants{.latency = 1, .cost = 0, .ttl = c.ttl};
  }
  return true;
}

bool LightCsvTotals(const std::string& path, const TraceReadOptions& o,
                    TotalsCounter* count) {
  CsvScanner csv(path);
  if (!csv.Open().ok()) return false;
  const RecordClass c =
      ClassifyRecord(count->options(), RequestType::kInformational,
                     std::numeric_limits<double>::infinity());
  KeyNumbering keys;
  uint64_t last = 0;
  CsvRecord r;
  for (bool done = false;;) {
    if (!csv.Next(&r, &done).ok()) return false;
    if (done) break;
    if (r.size > kMaxTraceResultSize ||
        count->records() >= PreparedTrace::kNone) {
      return false;
    }
    const uint32_t key = keys.Of(r);
    if (key == KeyNumbering::kFull) return false;
    count->Add(key, r.size, 0, c);
    if (o.progress && csv.consumed() - last >= kProgressEvery) {
      o.progress(csv.consumed(), csv.total());
      last = csv.consumed();
    }
  }
  if (o.progress) o.progress(csv.total(), csv.total());
  return true;
}

}  // namespace

Result<TraceTotals> ScanTraceTotals(const std::string& path,
                                    const TraceReadOptions& options,
                                    std::vector<uint64_t>* commands,
                                    std::optional<PlainConstants>* plain) {
  std::optional<PlainConstants> unused;
  if (plain == nullptr) plain = &unused;
  plain->reset();
  TraceFormat format = options.format;
  if (format == TraceFormat::kAuto) {
    Result<TraceFormat> f = DetectTraceFormat(path);
    if (!f.ok()) return f.status();
    format = *f;
  }
  if (options.prepare.scope == Scope::kGlobal) {
    commands->clear();
    TotalsCounter count(Stem(path), options.prepare, commands);
    bool vouched = false;
    switch (format) {
      case TraceFormat::kBinary:
        if (TraceTotals t; DeclaredBinaryTotals(path, options, &t, plain)) {
          return t;
        }
        vouched = LightBinaryTotals(path, options, &count, plain);
        if (vouched) return count.Done(/*sparse=*/true);
        break;
      case TraceFormat::kOracleGeneral:
        vouched = LightOracleTotals(path, options, &count, plain);
        break;
      case TraceFormat::kCsv:
        vouched = LightCsvTotals(path, options, &count);
        break;
      default:
        break;
    }
    if (vouched) return count.Done(/*sparse=*/false);
  }
  plain->reset();
  commands->clear();
  return StreamPreparedTrace(
      path, options, uint64_t{1} << 16,
      [&](const PreparedTrace& chunk, uint64_t) -> Status {
        CountCommands(chunk, commands);
        return Status::Ok();
      },
      TraceBuilder::StreamContent::kFlagsAndSessions);
}

namespace {

// StreamPlainTrace's chunk: the three varying columns of up to `cap`
// records, the builder's clock rule, and the totals the caller compares
// with the first pass.
class PlainChunker {
 public:
  PlainChunker(uint64_t cap, const PlainChunkSink& sink, double latency)
      : cap_(std::max<uint64_t>(1, cap)),
        sink_(sink),
        latency_(latency),
        object_(cap_),
        size_(cap_),
        now_(cap_) {}
  // Record `object` (new: first seen) of `size` bytes at `time` (NaN:
  // none). TraceBuilder::State::Push's clock and sizes. True when the
  // chunk is full: the caller then calls Flush (no Status per record).
  [[gnu::always_inline]] bool Add(uint32_t object, bool fresh, uint64_t size,
                                  double time) {
    const double t = std::isfinite(time) ? time : now_value_ + prev_latency_;
    now_value_ = std::max(now_value_, t);
    prev_latency_ = latency_;
    const uint64_t q_size = std::max<uint64_t>(1, size);
    object_[n_] = object;
    size_[n_] = q_size;
    now_[n_] = now_value_;
    t_.total_bytes += q_size;
    if (fresh) {
      ++t_.unique_cacheable_objects;
      t_.unique_cacheable_bytes += q_size;
    }
    return ++n_ == cap_;
  }
  Status Flush() {
    if (n_ == 0) return Status::Ok();
    const PlainChunk c{.object = object_.data(),
                       .size = size_.data(),
                       .now = now_.data(),
                       .records = n_};
    Status st = sink_(c, t_.records);
    t_.records += n_;
    n_ = 0;
    return st;
  }
  TraceTotals Done(std::string name, uint64_t objects) {
    t_.name = std::move(name);
    t_.objects = objects;
    t_.unique_cacheable_objects = objects;
    t_.session_count = t_.records > 0 ? 1 : 0;
    return std::move(t_);
  }

 private:
  const uint64_t cap_;
  const PlainChunkSink& sink_;
  const double latency_;
  std::vector<uint32_t> object_;
  std::vector<uint64_t> size_;
  std::vector<double> now_;
  uint64_t n_ = 0;
  double now_value_ = 0;
  double prev_latency_ = 0;
  TraceTotals t_;
};

Status Changed(const std::string& path) {
  return FailedPrecondition("trace '" + path +
                            "' changed between its two reads");
}

Status Undeclared(const std::string& path, uint64_t i, const char* what) {
  return FailedPrecondition(
      "trace '" + path + "': record " + std::to_string(i + 1) +
      " disagrees with the " + "header's plain declaration (" + what +
      " differs from record 1 or is out of bounds); " + "no row is reported");
}

// Why record `i` (at `p`) of a plain binary trace's second read is refused
// (StreamPlainTrace's one-test check failed), with the message the light
// pass's checks give. The first pass (or the header's declaration) vouched for
// every record; a file that does not match it is refused, never read out of
// bounds.
Status RefusePlainRecord(const std::string& path, const PlainConstants& k,
                         const char* p, uint64_t i, uint64_t key_count) {
  BinRecord r;
  std::memcpy(&r, p, kRecordSize);
  if (r.key >= key_count || r.type != 1 || r.error != 0 || r.digest != 0 ||
      r.tool != k.tool || r.user != k.user || r.session != k.session ||
      r.param_category != k.param_category ||
      std::bit_cast<uint64_t>(r.latency) !=
          std::bit_cast<uint64_t>(k.latency) ||
      std::bit_cast<uint64_t>(r.cost) != std::bit_cast<uint64_t>(k.cost)) {
    if (k.declared) {
      return Undeclared(path, i,
                        "a key, type, error, digest, tool, user, session, "
                        "category, latency or cost");
    }
    return Changed(path);
  }
  // Record 0's TTL as the first pass read it, key and tenant ids within
  // their bounds, size and clock within the builder's.
  if (std::bit_cast<uint64_t>(r.ttl) != k.ttl_bits || r.key > i ||
      r.tenant > i + 1 || !InTraceBounds(r.size, k.latency, k.cost, r.time)) {
    if (k.declared) {
      return Undeclared(path, i, "a key, TTL, tenant, size or clock");
    }
    return Changed(path);
  }
  // Unreachable: the one test is exactly the checks above. Refused all the
  // same, so that the caller never indexes with an unchecked key.
  return Changed(path);
}

}  // namespace

Result<TraceTotals> StreamPlainTrace(const std::string& path,
                                     const TraceReadOptions& options,
                                     const PlainConstants& k,
                                     uint64_t chunk_records,
                                     const PlainChunkSink& sink) {
  TraceFormat format = options.format;
  if (format == TraceFormat::kAuto) {
    Result<TraceFormat> f = DetectTraceFormat(path);
    if (!f.ok()) return f.status();
    format = *f;
  }
  PlainChunker chunk(chunk_records, sink, k.latency);
  MappedFile f;
  if (format == TraceFormat::kOracleGeneral) {
    if (Status s = MapOracleGeneral(path, &f); !s.ok()) return s;
    const uint64_t n = f.size() / kOracleRecord;
    KeyNumbering keys;
    for (uint64_t i = 0; i < n; ++i) {
      PrefetchAhead(f.data() + i * kOracleRecord);
      const auto [clock, id, size] = DecodeOracle(f.data(), i);
      const uint64_t before = keys.keys();
      const uint32_t key = keys.OfId(id);
      if (key == KeyNumbering::kFull) return Changed(path);
      if (chunk.Add(key, key == before, size, clock)) {
        if (Status s = chunk.Flush(); !s.ok()) return s;
      }
      if ((i & 0xffff) == 0xffff) f.Done(i * kOracleRecord);
    }
    if (Status s = chunk.Flush(); !s.ok()) return s;
    return chunk.Done(Stem(path), keys.keys());
  }
  if (format != TraceFormat::kBinary) {
    return InvalidArgument(path +
                           ": not a plain binary or oracleGeneral trace");
  }
  BinHeader h{};
  if (Status s = MapBinary(path, &f, &h); !s.ok()) return s;
  const char* base = f.data() + kHeaderSize;
  // Key id -> object index (first appearance), as AddInterned numbers them.
  std::vector<uint32_t> key_object(h.key_count, PreparedTrace::kNone);
  uint32_t objects = 0;
  const PlainWords plain(k);
  // InTraceBounds' latency and cost half: constants here.
  const bool constants_in_bounds = CallInTraceBounds(k.latency, k.cost);
  for (uint64_t i = 0; i < h.record_count; ++i) {
    const char* p = base + i * kRecordSize;
    PrefetchAhead(p);
    uint64_t key, size;
    double time;
    uint32_t tenant;
    std::memcpy(&key, p + offsetof(BinRecord, key), sizeof key);
    std::memcpy(&size, p + offsetof(BinRecord, size), sizeof size);
    std::memcpy(&time, p + offsetof(BinRecord, time), sizeof time);
    std::memcpy(&tenant, p + offsetof(BinRecord, tenant), sizeof tenant);
    // The common case in one test: every check below passes.
    if (!(constants_in_bounds && plain.Matches(p) && key < key_object.size() &&
          key <= i && tenant <= i + 1 && ResultInTraceBounds(size, time)))
        [[unlikely]] {
      return RefusePlainRecord(path, k, p, i, key_object.size());
    }
    uint32_t& o = key_object[key];
    const bool fresh = o == PreparedTrace::kNone;
    // A declared file also numbers its keys as they first appear (its
    // header counts them so).
    if (k.declared && fresh && key != objects) {
      return Undeclared(path, i, "a key, TTL, tenant, size or clock");
    }
    if (fresh) o = objects++;
    if (chunk.Add(o, fresh, size, time)) {
      if (Status s = chunk.Flush(); !s.ok()) return s;
    }
    if ((i & 0x3fff) == 0x3fff) f.Done(kHeaderSize + i * kRecordSize);
  }
  if (Status s = chunk.Flush(); !s.ok()) return s;
  TraceTotals t = chunk.Done(Stem(path), objects);
  if (k.declared &&
      (objects != h.key_count || t.unique_cacheable_bytes != h.plain_unique ||
       t.total_bytes != (h.plain_total & ~kPlainDeclared))) {
    return FailedPrecondition(
        "trace '" + path + "': its header declares it plain with " +
        std::to_string(h.key_count) + " keys, " +
        std::to_string(h.plain_unique) + " unique bytes and " +
        std::to_string(h.plain_total & ~kPlainDeclared) +
        " bytes; its records hold " + std::to_string(objects) + ", " +
        std::to_string(t.unique_cacheable_bytes) + " and " +
        std::to_string(t.total_bytes) + " (no row is reported)");
  }
  return t;
}

Result<uint64_t> ConvertToBinaryTrace(const std::string& in_path,
                                      TraceFormat in_format,
                                      const std::string& out_path) {
  if (in_format == TraceFormat::kAuto) {
    Result<TraceFormat> f = DetectTraceFormat(in_path);
    if (!f.ok()) return f.status();
    in_format = *f;
  }
  if (in_format == TraceFormat::kBinary) {
    return InvalidArgument(in_path + ": already a toolcache binary trace");
  }
  std::FILE* out = std::fopen(out_path.c_str(), "w+b");
  if (out == nullptr) {
    return Unavailable(out_path + ": cannot create the output file");
  }
  const BinHeader placeholder{};
  std::fwrite(&placeholder, kHeaderSize, 1, out);
  BinaryWriter w(out);
  uint64_t n = 0;
  Status s = ScanText(in_path, in_format, nullptr, [&](const RecordView& r) {
    ++n;
    Status st = w.Add(r);
    if (!st.ok()) {
      return Status(st.code(), in_path + ": record " + std::to_string(n) +
                                   ": " + st.message());
    }
    return st;
  });
  Result<uint64_t> done = s.ok() ? w.Finish(fileno(out)) : Result<uint64_t>(s);
  std::fclose(out);
  if (!done.ok()) std::remove(out_path.c_str());
  return done;
}

}  // namespace toolcache::sim
