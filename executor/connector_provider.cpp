#include "executor/connector_provider.h"

#include <fmt/format.h>

#include "common/error.h"

namespace rtsql {

std::unique_ptr<SinkTransaction> ConnectorProvider::openSinkTransaction(const SinkSpec& sink,
                                                                        const std::string&, int64_t) {
  throw SqlError(sqlstate::kFeatureNotSupported,
                 fmt::format("sink \"{}\" ({}) has no transactions for 'delivery' = 'exactly-once'",
                             sink.name, sink.connector));
}

std::unique_ptr<SinkWriter> ConnectorProvider::openTransactionalSink(const SinkSpec& sink,
                                                                     const std::string&, int,
                                                                     SinkTransaction&) {
  throw SqlError(sqlstate::kFeatureNotSupported,
                 fmt::format("sink \"{}\" ({}) has no transactions for 'delivery' = 'exactly-once'",
                             sink.name, sink.connector));
}

void SinkTransaction::add(const std::string& topic, int, std::string_view, const std::string*) {
  throw SqlError(sqlstate::kFeatureNotSupported,
                 fmt::format("this sink's transaction cannot carry records for {}", topic));
}

std::unique_ptr<FlowDeadLetterWriter> ConnectorProvider::openFlowDeadLetters(
    const PhysicalPlan& plan, FlowDeadLetters which, int) {
  throw SqlError(
      sqlstate::kFeatureNotSupported,
      fmt::format("flow \"{}\" sends {} to a dead-letter topic, and this server "
                  "has no Kafka connector to write them",
                  plan.flowName, which == FlowDeadLetters::LateRows ? "late rows" : "failed rows"));
}

std::unique_ptr<ExchangeOut> ConnectorProvider::openExchangeWriter(const ExchangeSpec& spec,
                                                                   const std::string& flowName,
                                                                   int) {
  throw SqlError(sqlstate::kFeatureNotSupported,
                 fmt::format("flow \"{}\" exchanges rows through topic {}, and this server has no "
                             "Kafka connector to write it",
                             flowName, spec.topic));
}

std::unique_ptr<SourceTask> ConnectorProvider::openExchangeSource(const ScanSpec& scan,
                                                                  const std::string& flowName) {
  throw SqlError(sqlstate::kFeatureNotSupported,
                 fmt::format("flow \"{}\" exchanges rows through topic {}, and this server has no "
                             "Kafka connector to read it",
                             flowName, scan.exchange.topic));
}

void SinkWriter::writeChange(const Row& row, int64_t sourceTimestampMicros, RowKind kind) {
  switch (kind) {
    case RowKind::Insert:
    case RowKind::UpdateAfter:
      write(row, sourceTimestampMicros);
      return;
    case RowKind::UpdateBefore:
      return;
    case RowKind::Delete:
      throw InternalError(description() + " cannot write a delete");
  }
}

}  // namespace rtsql
