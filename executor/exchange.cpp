#include "executor/exchange.h"

#include <fmt/format.h>

#include <charconv>
#include <cstring>

#include "common/clock.h"
#include "common/error.h"
#include "common/row_codec.h"
#include "executor/shuffle.h"

namespace rtsql {

namespace {

// Fixed-width little-endian fields (every machine rtsql runs on is
// little-endian; the layout is the message's, not the host's).
template <typename T>
void put(std::string& out, T v) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &v, sizeof(T));
  out.append(bytes, sizeof(T));
}

[[noreturn]] void damaged(std::string_view what) {
  throw SqlError(sqlstate::kDataCorrupted,
                 fmt::format("a message of a sharded flow's exchange topic is damaged: {}", what));
}

template <typename T>
T take(std::string_view& in) {
  if (in.size() < sizeof(T)) damaged("it ends early");
  T v;
  std::memcpy(&v, in.data(), sizeof(T));
  in.remove_prefix(sizeof(T));
  return v;
}

}  // namespace

std::string encodeExchangeRow(const ExchangeOrigin& origin, int64_t sourceTimestampMicros,
                              RowKind kind, const Row& row) {
  std::string out;
  encodeExchangeRow(out, origin, sourceTimestampMicros, kind, row);
  return out;
}

void encodeExchangeRow(std::string& out, const ExchangeOrigin& origin,
                       int64_t sourceTimestampMicros, RowKind kind, const Row& row) {
  out.clear();
  out.reserve(32 + row.size() * 9);
  out.push_back(static_cast<char>(ExchangeMessage::Kind::Row));
  put<int32_t>(out, origin.partition);
  put<int64_t>(out, origin.offset);
  put<int32_t>(out, origin.index);
  put<int64_t>(out, sourceTimestampMicros);
  out.push_back(static_cast<char>(kind));
  encodeRow(out, row);
}

std::string encodeExchangeMarker(ExchangeMessage::Kind kind, uint32_t producer, uint32_t producers,
                                 int64_t watermark) {
  std::string out;
  out.push_back(static_cast<char>(kind));
  put<uint32_t>(out, producer);
  put<uint32_t>(out, producers);
  put<int64_t>(out, watermark);
  return out;
}

ExchangeMessage decodeExchange(std::string_view in, const std::vector<DataTypePtr>& types) {
  ExchangeMessage m;
  const auto kind = static_cast<uint8_t>(take<char>(in));
  switch (kind) {
    case static_cast<uint8_t>(ExchangeMessage::Kind::Row): {
      m.kind = ExchangeMessage::Kind::Row;
      m.origin.partition = take<int32_t>(in);
      m.origin.offset = take<int64_t>(in);
      m.origin.index = take<int32_t>(in);
      m.sourceTimestampMicros = take<int64_t>(in);
      const auto rowKind = static_cast<uint8_t>(take<char>(in));
      if (rowKind > static_cast<uint8_t>(RowKind::Delete)) damaged("unknown row kind");
      m.rowKind = static_cast<RowKind>(rowKind);
      try {
        m.row = decodeRow(in, types);
      } catch (const SqlError&) {
        throw;
      } catch (const std::exception& e) {
        damaged(e.what());
      }
      if (m.row.size() != types.size()) damaged("its row has another width");
      return m;
    }
    case static_cast<uint8_t>(ExchangeMessage::Kind::Watermark):
    case static_cast<uint8_t>(ExchangeMessage::Kind::Idle):
      m.kind = static_cast<ExchangeMessage::Kind>(kind);
      m.producer = take<uint32_t>(in);
      m.producers = take<uint32_t>(in);
      m.watermark = take<int64_t>(in);
      if (!in.empty()) damaged("a marker with bytes after it");
      return m;
    default:
      damaged(fmt::format("unknown kind {}", kind));
  }
}

ExchangeReceiver::ExchangeReceiver(uint32_t producers, int ownShard, int shards)
    : producers_(producers),
      ownShard_(ownShard),
      shards_(std::max(shards, 1)),
      watermarks_(producers) {
  if (ownShard_ < 0) return;
  const uint32_t perCopy = producers_ / static_cast<uint32_t>(shards_);
  ownFirst_ = std::min(producers_, static_cast<uint32_t>(ownShard_) * perCopy);
  ownEnd_ = std::min(producers_, ownFirst_ + perCopy);
  for (uint32_t p = ownFirst_; p < ownEnd_; ++p) {
    idle_[p] = true;
    ++idleCount_;
    watermarks_.idle(static_cast<uint16_t>(p));
  }
}

bool ExchangeReceiver::accept(const ExchangeOrigin& origin) {
  if (ownShard_ >= 0 && origin.partition >= 0 && origin.partition % shards_ == ownShard_) {
    ++repeats_;
    return false;
  }
  auto [it, fresh] = taken_.try_emplace(origin.partition, origin);
  if (fresh) return true;
  if (origin <= it->second) {
    ++repeats_;
    return false;
  }
  it->second = origin;
  return true;
}

void ExchangeReceiver::marker(const ExchangeMessage& m) {
  if (m.producer >= producers_ || m.producers != producers_) {
    throw SqlError(
        sqlstate::kDataCorrupted,
        fmt::format("a marker of a sharded flow's exchange topic names producer {} of {}, "
                    "and this flow has {}",
                    m.producer, m.producers, producers_))
        .withHint(
            "the topic holds messages of another shape of the flow: drop the flow and "
            "create it again");
  }
  if (own(m.producer)) return;  // in process
  const auto producer = static_cast<uint16_t>(m.producer);
  if (m.kind == ExchangeMessage::Kind::Idle) {
    if (!idle_[m.producer]) {
      idle_[m.producer] = true;
      ++idleCount_;
    }
    watermarks_.idle(producer);
  } else {
    if (idle_[m.producer]) {
      idle_[m.producer] = false;
      --idleCount_;
    }
    watermarks_.watermark(producer, m.watermark);
  }
}

std::string ExchangeReceiver::position() const {
  // "partition:offset:index" per origin partition, comma-separated.
  std::string out;
  for (const auto& [partition, at] : taken_) {
    if (!out.empty()) out += ',';
    out += fmt::format("{}:{}:{}", partition, at.offset, at.index);
  }
  return out;
}

void ExchangeReceiver::restore(std::string_view token) {
  taken_.clear();
  auto bad = [&] {
    throw SqlError(sqlstate::kDataCorrupted,
                   fmt::format("the checkpointed position '{}' of a sharded flow's exchange is "
                               "damaged",
                               token));
  };
  std::string_view rest = token;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (comma != std::string_view::npos && rest.empty()) bad();  // a trailing comma
    ExchangeOrigin at;
    int64_t fields[3];
    for (int f = 0; f < 3; ++f) {
      const size_t colon = f < 2 ? item.find(':') : item.size();
      if (colon == std::string_view::npos) bad();
      std::string_view field = item.substr(0, colon);
      auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), fields[f]);
      if (ec != std::errc() || end != field.data() + field.size() || field.empty()) bad();
      item = f < 2 ? item.substr(colon + 1) : std::string_view();
    }
    at.partition = static_cast<int32_t>(fields[0]);
    at.offset = fields[1];
    at.index = static_cast<int32_t>(fields[2]);
    taken_[at.partition] = at;
  }
}

void ExchangeWriter::push(Row& row, const RecordContext& ctx) {
  countIn();
  const size_t hash = shuffleKeyHash(keys_, row);
  const int shard = shardOfKeyHash(hash, shards_);
  if (shard == ownShard_) {
    local_->pushHashed(row, ctx, hash);
    ++origin_.index;
    countOut();
    return;
  }
  encodeExchangeRow(message_, origin_, ctx.sourceTimestampMicros, ctx.kind, row);
  out_.send(shard, message_, ctx.sourceTimestampMicros);
  ++origin_.index;
  countOut();
}

void ExchangeWriter::onWatermark(int64_t watermarkMicros) {
  const bool wasIdle = idle_;
  idle_ = false;
  watermark_ = std::max(watermark_, watermarkMicros);
  if (wasIdle || nowMicros() / 1000 >= lastMarkerMillis_ + paceMillis_) {
    sendMarker();
  } else {
    markerHeld_ = true;
  }
}

void ExchangeWriter::onIdle() {
  idle_ = true;
  sendMarker();
}

void ExchangeWriter::onBatchEnd() {
  const int64_t nowMillis = nowMicros() / 1000;
  if (nowMillis >= nextMarkerMillis_ ||
      (markerHeld_ && nowMillis >= lastMarkerMillis_ + paceMillis_))
    sendMarker();
}

void ExchangeWriter::sendMarker() {
  const int64_t now = nowMicros();
  const std::string marker =
      encodeExchangeMarker(idle_ ? ExchangeMessage::Kind::Idle : ExchangeMessage::Kind::Watermark,
                           producer_, producers_, watermark_);
  for (int shard = 0; shard < shards_; ++shard) {
    if (shard != ownShard_) out_.send(shard, marker, now);
  }
  // The copy's own stateful stage gets the watermark at the same pace: its
  // watermark is the minimum over this and the back's, which comes at that
  // pace from the other copies, so sooner would buy nothing but a message
  // to each of its tasks per advance. (That the task is idle the task
  // itself tells the shuffle.)
  if (local_ && !idle_ && watermark_ != INT64_MIN) local_->onWatermark(watermark_);
  lastMarkerMillis_ = now / 1000;
  nextMarkerMillis_ = lastMarkerMillis_ + kMarkerEveryMillis;
  markerHeld_ = false;
}

}  // namespace rtsql
