// The HTTP sink: each row of a flow POSTed (or PUT) as JSON to a URL, the
// forEach of webhooks and alerting.
//
//   CREATE SINK hook WITH (connector = 'http', url = 'http://127.0.0.1:8080/alerts',
//                          'http.header.Authorization' = 'Bearer x',
//                          'batch.max.rows' = '50');
//
// A body is one row as the json format writes it (connectors/format/codec.h),
// or with 'batch.max.rows' > 1 a JSON array of up to that many rows.
//
// write() only encodes the row and queues it: the requests are sent by the
// writer's own sender threads, 'max.in.flight' of them, each with one
// keep-alive connection, so at most that many requests are outstanding. A
// full queue is backpressure (write() waits), never loss. A request that
// meets a connection error, a timeout, a 5xx or a 429 is retried with
// exponential backoff (429 and 503 honour Retry-After, bounded); any other
// 4xx is a permanent failure. Rows whose request failed for good make the
// next flush() (each epoch's end) throw SqlError naming the URL, the status
// and the answer's size (never its text: the URL may be the user's to choose),
// so the flow fails as on a Kafka delivery error. Requests go through rtsqld's
// outbound client (connectors/net/http_client.h): the outbound policy, a cap
// on the answer's bytes and 'request.timeout.ms' (at most 60000) as one
// deadline per request.
//
// A flow that stops (STOP FLOW, DROP FLOW, SIGTERM) does not wait out the
// retries at its final flush: from flowStopping() on, each request makes one
// more attempt at most (a backoff in progress ends), and when rtsqld stops
// its outbound traffic (SIGTERM) a request in progress is cancelled. Rows so
// left undelivered fail that flush, so the final epoch is not committed.
//
// Delivery is at least once: a flow that restarts from its last checkpoint
// sends the rows after it again, and a request the server handled but whose
// answer was lost is sent again. With 'max.in.flight' = 1 a task's rows
// arrive in the order it wrote them.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/options.h"
#include "connectors/net/http_client.h"
#include "executor/connector_provider.h"
#include "planner/physical_plan.h"

namespace rtsql {

// A sink's options, checked: read once at CREATE SINK (SinkOptions::own).
struct HttpSinkConfig final : ConnectorOptions {
  std::string url;  // as written, for messages
  HttpUrl target;
  std::string method = "POST";
  std::vector<std::pair<std::string, std::string>> headers;  // 'http.header.<Name>'
  int64_t batchMaxRows = 1;
  int64_t lingerMs = 5;
  int64_t maxInFlight = 4;
  int64_t retries = 5;
  int64_t retryBackoffMs = 100;
  int64_t retryBackoffMaxMs = 10000;
  int64_t requestTimeoutMs = 10000;
  std::string caFile;  // 'http.ca': PEM file of the CAs an https server is checked against
};

// Checks the options (SqlError 22023 at the key or value at fault, at
// `stmtPos` for a missing url; 0A000 for mode 'upsert') and returns them.
HttpSinkConfig parseHttpSinkOptions(const Options& options, size_t stmtPos);

// What an answer's status means for the rows of the request.
enum class HttpVerdict { Delivered, Retry, Permanent };
// 2xx delivered; 408, 429 and 5xx retried; everything else permanent.
HttpVerdict classifyHttpStatus(int status);

// The wait before retry `attempt` (1 for the first): base * 2^(attempt-1),
// capped at `maxMs`. A Retry-After of the server (`retryAfterMs` >= 0)
// replaces it, capped the same way.
int64_t httpRetryDelayMs(int attempt, int64_t baseMs, int64_t maxMs, int64_t retryAfterMs);

// The body of a request: with `array` the rows as one JSON array, otherwise
// the single row (rows.size() == 1).
std::string httpBatchBody(const std::vector<std::string>& rows, bool array);

// Sink task `task` of flow `flowName`.
std::unique_ptr<SinkWriter> makeHttpSink(const SinkSpec& sink, const std::string& flowName,
                                         int task);

}  // namespace rtsql
