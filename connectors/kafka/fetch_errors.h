// Records a Kafka consumer cannot hand over. librdkafka reports a compressed
// batch it cannot decompress (corrupt, or decompressing past the consumer's
// 'receive.message.max.bytes': a zstd batch of a few KB may claim gigabytes),
// a corrupt record, or one larger than it may fetch as a consumer error at
// that partition's offset, and then fetches the same offset again, and fails
// again, for ever: the partition stalls while the flow says `running`. A
// source task instead counts such a record as one it cannot decode, under its
// 'on.error' (fail, skip or dead-letter), and on skip moves the partition's
// position past it.
#pragma once

#include <librdkafka/rdkafka.h>

#include <cstdint>
#include <string>

namespace rtsql::kafka {

// Whether a consumer error `err` is about one record that cannot be fetched or
// decompressed (and so will be reported again at every fetch of its offset),
// rather than about the connection or the cluster, which the client recovers
// from by itself.
bool isUnreadableRecordError(rd_kafka_resp_err_t err);

// The offset of the record that consumer error `m` is about, when the
// partition's position (the offset of its next record) is `position` (-1 when
// unknown). librdkafka names the first offset of the batch it could not
// decompress, also when the position is past it inside that batch: the record
// at the position is then the one that cannot be read.
int64_t unreadableRecordOffset(const rd_kafka_message_t& m, int64_t position);

// Why the record of consumer error `m` cannot be read, for its decode error.
std::string unreadableRecordReason(const rd_kafka_message_t& m);

// Moves the position of `topic` partition `partition` of consumer `rk` to
// `offset`, and waits (at most a few seconds, never on the network) until the
// client has done so, so that no error of the old position follows. Throws
// SqlError 08006 when the client refuses.
void seekPartition(rd_kafka_t* rk, const std::string& topic, int32_t partition, int64_t offset);

// The same for a partition read with rd_kafka_consume_start_queue (a live
// tap): false with `why` set when the client refuses.
bool seekStartedPartition(rd_kafka_topic_t* rkt, int32_t partition, int64_t offset,
                          std::string& why);

}  // namespace rtsql::kafka
