// Records a Kafka consumer cannot hand over (see fetch_errors.h).
#include "connectors/kafka/fetch_errors.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/error.h"
#include "connectors/kafka/assigned_consumer.h"
#include "connectors/kafka/client.h"

namespace rtsql::kafka {

bool isUnreadableRecordError(rd_kafka_resp_err_t err) {
  return err == RD_KAFKA_RESP_ERR__BAD_COMPRESSION || err == RD_KAFKA_RESP_ERR__BAD_MSG ||
         err == RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE;
}

int64_t unreadableRecordOffset(const rd_kafka_message_t& m, int64_t position) {
  if (m.offset < 0) return position;
  return std::max<int64_t>(m.offset, position);
}

std::string unreadableRecordReason(const rd_kafka_message_t& m) {
  const char* why = "";
  switch (m.err) {
    case RD_KAFKA_RESP_ERR__BAD_COMPRESSION:
      why =
          "the Kafka client cannot decompress its batch (corrupt, or larger decompressed than "
          "the consumer's 'receive.message.max.bytes')";
      break;
    case RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE:
      why = "the record is larger than the Kafka client may fetch";
      break;
    default:
      why = "the Kafka client finds the record corrupt";
      break;
  }
  return fmt::format("{}: {}", why, rd_kafka_message_errstr(&m));
}

void seekPartition(rd_kafka_t* rk, const std::string& topic, int32_t partition, int64_t offset) {
  ListPtr list(rd_kafka_topic_partition_list_new(1));
  rd_kafka_topic_partition_list_add(list.get(), topic.c_str(), partition)->offset = offset;
  rd_kafka_error_t* error = rd_kafka_seek_partitions(rk, list.get(), kSeekTimeoutMs);
  rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR;
  std::string why;
  if (error) {
    err = rd_kafka_error_code(error);
    why = rd_kafka_error_string(error);
    rd_kafka_error_destroy(error);
  } else if (list->elems[0].err) {
    err = list->elems[0].err;
    why = rd_kafka_err2str(err);
  }
  if (err) {
    throw SqlError(sqlstate::kConnectionFailure,
                   fmt::format("cannot move topic '{}' partition {} past a record it cannot read, "
                               "to offset {}: {}",
                               topic, partition, offset, why));
  }
}

bool seekStartedPartition(rd_kafka_topic_t* rkt, int32_t partition, int64_t offset,
                          std::string& why) {
  const rd_kafka_resp_err_t err = rd_kafka_seek(rkt, partition, offset, kSeekTimeoutMs);
  if (err) why = rd_kafka_err2str(err);
  return err == RD_KAFKA_RESP_ERR_NO_ERROR;
}

}  // namespace rtsql::kafka
