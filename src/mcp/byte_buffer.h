// ByteBuffer: a growable, move-only block of bytes for one JSON-RPC line of
// up to --max-line-bytes, and OutQueue: the bytes waiting to be written to
// one peer, as a queue of such blocks and of borrowed stored results.
//
// A line grows 64 KiB at a time while it is read. std::string doubles its
// capacity by allocating a new block and copying, so for a moment the old
// and the new block are both resident (up to twice the line). ByteBuffer
// keeps blocks from 1 MiB on in their own memory mapping and grows them with
// mremap, which moves page mappings instead of copying bytes (smaller blocks
// use realloc). Once a line is complete, its block can be handed over
// (moved) to the queue of the peer it is forwarded to, so forwarding a line
// never copies it.
//
// Thread-safety: none (one poll loop). Ownership: a ByteBuffer owns its
// block; an OutQueue owns its blocks and shares (keeps alive) the stored
// results it references.
//
// Example:
//   ByteBuffer b;
//   b.Append("{\"jsonrpc\":");
//   OutQueue q;
//   q.PushOwned(std::move(b));  // no copy
//   q.Push("\n");
//   while (!q.empty()) q.Consume(write(fd, q.Front().data(),
//   q.Front().size()));
#ifndef TOOLCACHE_SRC_MCP_BYTE_BUFFER_H_
#define TOOLCACHE_SRC_MCP_BYTE_BUFFER_H_

#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <utility>

namespace toolcache::mcp {

class ByteBuffer {
 public:
  ByteBuffer() = default;
  ~ByteBuffer() { Free(); }
  ByteBuffer(ByteBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)),
        size_(std::exchange(o.size_, 0)),
        capacity_(std::exchange(o.capacity_, 0)) {}
  ByteBuffer& operator=(ByteBuffer&& o) noexcept {
    if (this != &o) {
      Free();
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
      capacity_ = std::exchange(o.capacity_, 0);
    }
    return *this;
  }
  ByteBuffer(const ByteBuffer&) = delete;
  ByteBuffer& operator=(const ByteBuffer&) = delete;

  // Appends `bytes`, growing the block (at least doubling).
  void Append(std::string_view bytes) {
    if (bytes.empty()) return;
    if (size_ + bytes.size() > capacity_) Grow(size_ + bytes.size());
    std::memcpy(data_ + size_, bytes.data(), bytes.size());
    size_ += bytes.size();
  }
  // Empties the buffer; a block above `keep` bytes is freed, a smaller one
  // kept for reuse.
  void Clear(size_t keep) {
    size_ = 0;
    if (capacity_ > keep) Free();
  }
  std::string_view view() const { return {data_, size_}; }
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  bool empty() const { return size_ == 0; }

 private:
  // Choice: blocks from 1 MiB on are mappings of their own (mremap grows
  // them without copying, munmap returns them at once); smaller ones come
  // from malloc.
  static constexpr size_t kMapBytes = size_t{1} << 20;

  bool mapped() const { return capacity_ >= kMapBytes; }

  void Grow(size_t need) {
    size_t want = capacity_ < 4096 ? 4096 : capacity_ * 2;
    if (want < need) want = need;
    if (want < kMapBytes) {
      void* grown = std::realloc(data_, want);
      if (grown == nullptr) throw std::bad_alloc();
      data_ = static_cast<char*>(grown);
      capacity_ = want;
      return;
    }
    const size_t page = 4096;
    want = (want + page - 1) / page * page;
    void* grown;
    if (mapped()) {
      grown = mremap(data_, capacity_, want, MREMAP_MAYMOVE);
    } else {
      grown = mmap(nullptr, want, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (grown != MAP_FAILED) {
        if (size_ > 0) std::memcpy(grown, data_, size_);
        std::free(data_);
      }
    }
    if (grown == MAP_FAILED) throw std::bad_alloc();
    data_ = static_cast<char*>(grown);
    capacity_ = want;
  }

  void Free() {
    if (data_ != nullptr) {
      if (mapped()) {
        munmap(data_, capacity_);
      } else {
        std::free(data_);
      }
    }
    data_ = nullptr;
    size_ = 0;
    capacity_ = 0;
  }

  char* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

// Bytes queued for one peer, written in the order they were pushed.
class OutQueue {
 public:
  // Copies `bytes` (small messages are gathered into one block).
  void Push(std::string_view bytes) {
    if (bytes.empty()) return;
    if (parts_.empty() || !parts_.back().gather ||
        parts_.back().text.size() > kGatherLimit) {
      parts_.emplace_back();
      parts_.back().gather = true;
    }
    parts_.back().text.append(bytes);
    queued_ += bytes.size();
  }
  // Queues a whole block without copying it.
  void PushOwned(ByteBuffer block) {
    if (block.empty()) return;
    Part& p = parts_.emplace_back();
    queued_ += block.size();
    p.block = std::move(block);
  }
  // Queues `bytes`, which live inside `*keep`, without copying them.
  void PushShared(std::string_view bytes,
                  std::shared_ptr<const std::string> keep) {
    if (bytes.empty()) return;
    Part& p = parts_.emplace_back();
    p.shared = std::move(keep);
    p.borrowed = bytes;
    queued_ += bytes.size();
  }
  // Moves everything queued in `other` behind what is queued here.
  void Splice(OutQueue& other) {
    for (Part& p : other.parts_) parts_.push_back(std::move(p));
    queued_ += other.queued_;
    other.parts_.clear();
    other.queued_ = 0;
  }

  bool empty() const { return queued_ == 0; }
  size_t size() const { return queued_; }
  // The next unwritten bytes. REQUIRES: !empty().
  std::string_view Front() const {
    return parts_.front().bytes().substr(front_offset_);
  }
  // Marks `n` bytes of Front() written (n <= Front().size()).
  void Consume(size_t n) {
    front_offset_ += n;
    queued_ -= n;
    if (front_offset_ == parts_.front().bytes().size()) {
      parts_.pop_front();
      front_offset_ = 0;
    }
  }
  void Clear() {
    parts_.clear();
    front_offset_ = 0;
    queued_ = 0;
  }

 private:
  // Choice: small messages are gathered into blocks of up to 64 KiB, one
  // write() each.
  static constexpr size_t kGatherLimit = 64 * 1024;
  struct Part {
    bool gather = false;
    std::string text;                           // gathered copies
    ByteBuffer block;                           // an owned line
    std::shared_ptr<const std::string> shared;  // keeps `borrowed` alive
    std::string_view borrowed;
    std::string_view bytes() const {
      if (shared) return borrowed;
      if (!block.empty()) return block.view();
      return text;
    }
  };
  std::deque<Part> parts_;
  size_t front_offset_ = 0;
  size_t queued_ = 0;
};

}  // namespace toolcache::mcp

#endif  // TOOLCACHE_SRC_MCP_BYTE_BUFFER_H_
