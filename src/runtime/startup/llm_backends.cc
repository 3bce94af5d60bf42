// The LLM extractor's HTTP model and sealed Store memory
// (llm_backends.h).
//
// Invariants:
// - Ask returns within timeoutSeconds + 1 s: the client's own connect,
//   response and idle timeouts end the call, and a backstop wait cancels
//   it on the client's loop if they did not.
// - A response body larger than 64 KiB is cut and the call fails.
// - Values written to the Store are sealed; one that does not unseal is
//   DATA_LOSS to the extractor (asked again), never used.
// Choice: answers longer than 64 KiB are not feature JSON (kMaxResponseBytes).
#include "src/runtime/startup/llm_backends.h"

#include <chrono>
#include <cstdlib>
#include <future>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "src/http/http.h"
#include "src/store/sealed.h"

namespace toolcache::runtime {
namespace {

constexpr std::string_view kStoreNamespace = "llmx";
constexpr size_t kMaxResponseBytes = 64 << 10;

// Collects one response; fulfils its promise once.
class Collector final : public http::ResponseSink {
 public:
  struct Outcome {
    Status status;
    int http_status = 0;
    std::string body;
  };
  std::future<Outcome> future() { return promise_.get_future(); }
  void OnHead(int status, const http::Headers&) override { status_ = status; }
  bool OnData(std::string_view data) override {
    if (body_.size() + data.size() > kMaxResponseBytes) {
      too_long_ = true;
      return true;
    }
    body_.append(data);
    return true;
  }
  void OnEnd(const Status& status) override {
    Finish(too_long_ ? InvalidArgument("the response is larger than 64 KiB")
                     : status);
  }
  void Finish(Status status) {
    std::lock_guard<std::mutex> lock(mu_);
    if (done_) return;
    done_ = true;
    promise_.set_value(Outcome{std::move(status), status_, std::move(body_)});
  }
  std::weak_ptr<http::Call> call;  // set and read on the loop

 private:
  std::mutex mu_;
  bool done_ = false;
  std::promise<Outcome> promise_;
  int status_ = 0;
  std::string body_;
  bool too_long_ = false;
};

class HttpModel final : public classify::LlmModel {
 public:
  HttpModel(const LlmExtractorConfig& config, http::Url url,
            std::unique_ptr<http::Client> client)
      : api_(config.api),
        timeout_seconds_(config.timeout_seconds),
        url_(std::move(url)),
        target_(config.api == "openai" ? "/v1/chat/completions"
                                       : "/v1/messages"),
        client_(std::move(client)),
        loop_(http::NewLoopThread()) {
    if (!config.api_key_env.empty()) {
      if (const char* k = std::getenv(config.api_key_env.c_str())) {
        api_key_ = k;
      }
    }
  }
  ~HttpModel() override {
    client_->CloseIdle();
    loop_.reset();  // stops and joins the loop thread
    client_.reset();
  }

  Result<classify::LlmReply> Ask(std::string_view request_body) override {
    http::ClientRequest req;
    req.method = "POST";
    req.target = target_;
    req.headers.push_back({"content-type", "application/json"});
    if (api_ == "openai") {
      if (!api_key_.empty()) {
        req.headers.push_back({"authorization", "Bearer " + api_key_});
      }
    } else {
      req.headers.push_back({"anthropic-version", "2023-06-01"});
      if (!api_key_.empty()) req.headers.push_back({"x-api-key", api_key_});
    }
    req.body = std::string(request_body);
    auto sink = std::make_shared<Collector>();
    std::future<Collector::Outcome> done = sink->future();
    http::Loop* l = loop_->loop();
    http::Post(l, [this, l, sink, req = std::move(req)]() mutable {
      sink->call = client_->Start(l, url_, std::move(req), sink);
    });
    // The client's own timeouts end the call; this wait is the backstop.
    if (done.wait_for(std::chrono::duration<double>(timeout_seconds_ + 1)) !=
        std::future_status::ready) {
      std::promise<void> cancelled;
      std::future<void> c = cancelled.get_future();
      http::Post(l, [sink, &cancelled] {
        if (auto call = sink->call.lock()) call->Cancel();
        sink->Finish(Unavailable("timeout"));
        cancelled.set_value();
      });
      c.wait();
    }
    Collector::Outcome out = done.get();
    if (!out.status.ok()) return out.status;
    return classify::LlmReply{out.http_status, std::move(out.body)};
  }

 private:
  const std::string api_;
  const double timeout_seconds_;
  const http::Url url_;
  const std::string target_;
  std::string api_key_;
  std::unique_ptr<http::Client> client_;
  std::unique_ptr<http::LoopThread> loop_;
};

class SealedMemory final : public classify::LlmAnswerMemory {
 public:
  explicit SealedMemory(Store* store) : store_(store) {}

  Result<std::optional<std::string>> Recall(std::string_view digest) override {
    const StoreKey key{kStoreNamespace, digest};
    Result<std::vector<std::optional<StoreValue>>> got =
        store_->Get(std::span<const StoreKey>(&key, 1));
    if (!got.ok() || got->empty() || !(*got)[0]) {
      return std::optional<std::string>();
    }
    std::optional<std::string_view> text = UnsealValue(*(*got)[0]->bytes);
    if (!text) return DataLoss("the stored answer does not unseal");
    return std::optional<std::string>(std::string(*text));
  }

  Status Remember(std::string_view digest, std::string_view answer_json,
                  double ttl_seconds) override {
    return store_->Put({kStoreNamespace, digest}, SealValue(answer_json),
                       ttl_seconds);
  }

 private:
  Store* const store_;
};

}  // namespace

Result<classify::LlmBackends> MakeLlmBackends(const LlmExtractorConfig& config,
                                              Store* store) {
  Result<http::Url> url = http::ParseUrl(config.url);
  if (!url.ok()) {
    return InvalidArgument("classifier.llm.url: " + url.status().message());
  }
  http::ClientOptions co;
  co.connect_timeout_seconds = config.timeout_seconds;
  co.response_timeout_seconds = config.timeout_seconds;
  co.idle_timeout_seconds = config.timeout_seconds;
  Result<std::unique_ptr<http::Client>> client = http::NewClient(co);
  if (!client.ok()) return client.status();
  classify::LlmBackends b;
  b.model =
      std::make_unique<HttpModel>(config, std::move(*url), std::move(*client));
  if (store != nullptr) b.memory = std::make_unique<SealedMemory>(store);
  return b;
}

}  // namespace toolcache::runtime

namespace toolcache {

// The public entry (classifier.h) for programs that link the library: the
// same install main() does.
void UseBuiltInLlmBackends() {
  classify::InstallLlmBackends(runtime::MakeLlmBackends);
}

}  // namespace toolcache
