// The Kinesis API client (see client.h).
#include "connectors/kinesis/client.h"

#include <fmt/format.h>

#include <cctype>

#include "common/clock.h"
#include "connectors/kinesis/protocol.h"
#include "connectors/net/http_client.h"

namespace rtsql::kinesis {

namespace {

// GetRecords answers up to 10 MB of records, base64 encoded.
constexpr uint64_t kMaxAnswer = 64u << 20;

// An exception type as the service names it ("ExpiredIteratorException"),
// or empty when the answer's is anything else: it goes into errors.
std::string serviceErrorType(const std::string& type) {
  if (type.empty() || type.size() > 100) return {};
  for (char c : type) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '.' && c != '_' && c != ':' &&
        c != '#') {
      return {};
    }
  }
  return type;
}

}  // namespace

bool CallError::retryable() const {
  return transport_ || isRetryable(serviceError_, status_);
}

struct Client::Impl {
  ClientConfig config;
  std::unique_ptr<net::HttpClient> http;
};

Client::Client(ClientConfig config) : impl_(std::make_unique<Impl>()) {
  impl_->config = std::move(config);
  std::string why;
  std::optional<HttpUrl> url = parseHttpUrl(impl_->config.endpoint, why);
  if (!url) throw std::invalid_argument(why);
  impl_->http = std::make_unique<net::HttpClient>(*url);
}

Client::~Client() = default;

const std::string& Client::endpoint() const {
  return impl_->config.endpoint;
}

std::string Client::call(std::string_view action, const std::string& body) {
  Impl& c = *impl_;
  const HttpUrl& url = c.http->url();
  aws::Request signing;
  signing.method = "POST";
  signing.path = url.target.empty() ? "/" : url.target;
  signing.headers = {{"Host", c.http->hostHeader()},
                     {"X-Amz-Date", aws::amzDate(nowMicros() / 1'000'000)},
                     {"X-Amz-Target", std::string(kTargetPrefix) + std::string(action)},
                     {"Content-Type", std::string(kContentType)}};
  signing.body = body;
  aws::Signature signature = aws::sign(signing, c.config.credentials, c.config.region, "kinesis");

  net::HttpRequest req;
  req.method = "POST";
  req.target = signing.path;
  for (const auto& [name, value] : signing.headers) {
    // The client writes Host itself, from the same URL.
    if (name != "Host") req.headers.emplace_back(name, value);
  }
  req.headers.emplace_back("Authorization", signature.authorization);
  req.body = body;
  req.keepAlive = true;
  net::HttpResult r = c.http->exchange(req, {c.config.requestTimeoutMs, kMaxAnswer});
  if (!r.ok()) {
    throw CallError(fmt::format("{}: {}", c.config.endpoint, r.error), {}, 0, true);
  }
  const int status = r.answer.status;
  if (status == 200) return std::move(r.answer.body);
  // The exception type decides what to do; the rest of the answer stays out
  // of the message, which names the status and the size.
  const std::string type = serviceErrorType(parseServiceError(r.answer.body).type);
  throw CallError(fmt::format("{} {} answered HTTP {}{}{} ({} bytes)", c.config.endpoint, action,
                              status, type.empty() ? "" : " ", type, r.answer.body.size()),
                  type, status, false);
}

}  // namespace rtsql::kinesis
