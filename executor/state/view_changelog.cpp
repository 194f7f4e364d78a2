// A materialized view's changelog (view_changelog.h): the writer each task of
// the view's sink stage appends to, and the source task of a flow that reads
// the view, which follows the view's checkpoints on disk.
#include "executor/state/view_changelog.h"

#include <fmt/format.h>
#include <rocksdb/db.h>
#include <rocksdb/iterator.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "common/clock.h"
#include "common/error.h"
#include "common/row_codec.h"
#include "common/schema.h"
#include "executor/checkpoint.h"
#include "executor/state/rocksdb_shared.h"
#include "executor/state/state_store.h"
#include "executor/state/view_table.h"

namespace rtsql {

using rocks_detail::kPrefixSize;
using rocks_detail::slice;
using rocks_detail::view;

namespace {

// The key of a task's next sequence number: one byte, after every entry's
// eight (sequence numbers stay far below 2^56); and of its first entry kept.
constexpr std::string_view kCounterKey = "\xff";
constexpr std::string_view kLowKey = "\xfe";
constexpr size_t kSeqSize = 8;

void appendBigEndian(std::string& out, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

uint64_t readBigEndian(std::string_view in) {
  uint64_t v = 0;
  for (char c : in) v = (v << 8) | static_cast<uint8_t>(c);
  return v;
}

std::string prefixOf(int operatorId, uint32_t task) {
  std::string out;
  appendBigEndian(out, static_cast<uint32_t>(operatorId), 4);
  appendBigEndian(out, task, 4);
  return out;
}

std::string operatorPrefix(int operatorId) {
  std::string out;
  appendBigEndian(out, static_cast<uint32_t>(operatorId), 4);
  return out;
}

}  // namespace

namespace {

std::mutex boundMu;
ViewChangelogBound& boundFn() {
  static ViewChangelogBound fn;
  return fn;
}

}  // namespace

void setViewChangelogBound(ViewChangelogBound bound) {
  std::lock_guard lock(boundMu);
  boundFn() = std::move(bound);
}

ViewChangelogWriter::ViewChangelogWriter(StateStore& store, std::string view, int task)
    : table_(store.table(kViewChangelogOperatorId, task)),
      view_(std::move(view)),
      task_(static_cast<uint32_t>(task)) {
  // The store holds the checkpoint the flow restored: its changelog ends here,
  // and the epochs after it are appended again from this number on.
  std::string value;
  if (table_->get(kCounterKey, value)) next_ = readBigEndian(value);
  if (table_->get(kLowKey, value)) low_ = readBigEndian(value);
}

void ViewChangelogWriter::expire() {
  const int64_t now = monotonicMicros();
  if (now < nextExpiryMicros_) return;
  nextExpiryMicros_ = now + kViewChangelogExpiryMicros;
  ViewChangelogBound bound;
  {
    std::lock_guard lock(boundMu);
    bound = boundFn();
  }
  if (!bound) return;
  std::optional<ViewChangelogEnds> ends;
  try {
    ends = bound(view_);
  } catch (const std::exception&) {
    // Expiry only saves disk: the view goes on, keeping its changes for
    // the next round.
    return;
  }
  if (!ends) return;
  auto it = ends->find(task_);
  // A task no reader has a position in yet: nothing of it was read, and
  // none of it may go.
  if (it == ends->end()) return;
  const uint64_t upTo = std::min(it->second, next_);
  if (upTo <= low_) return;
  for (uint64_t seq = low_; seq < upTo; ++seq) {
    keyBuf_.clear();
    appendBigEndian(keyBuf_, seq, kSeqSize);
    table_->erase(keyBuf_);
  }
  low_ = upTo;
  valueBuf_.clear();
  appendBigEndian(valueBuf_, low_, 8);
  table_->put(kLowKey, valueBuf_);
}

ViewChangelogWriter::~ViewChangelogWriter() = default;

void ViewChangelogWriter::append(RowKind kind, std::string_view encodedRow) {
  keyBuf_.clear();
  appendBigEndian(keyBuf_, next_++, kSeqSize);
  valueBuf_.clear();
  valueBuf_ += static_cast<char>(kind);
  valueBuf_.append(encodedRow);
  table_->put(keyBuf_, valueBuf_);
  dirty_ = true;
}

void ViewChangelogWriter::flush() {
  expire();
  // The counter is written at least once, so that a reader finds every
  // task's changelog, even an empty one, in the first checkpoint.
  std::string value;
  if (dirty_ || !table_->get(kCounterKey, value)) {
    value.clear();
    appendBigEndian(value, next_, 8);
    table_->put(kCounterKey, value);
    dirty_ = false;
  }
  table_->flush();
}

namespace {

struct DbCloser {
  void operator()(rocksdb::DB* db) const {
    db->Close().PermitUncheckedError();
    delete db;
  }
};
using DbPtr = std::unique_ptr<rocksdb::DB, DbCloser>;

// The complete checkpoints of a view's flow, newest first, read without
// changing anything under the root (the view's flow writes there meanwhile).
std::vector<uint64_t> checkpointEpochs(const std::string& root) {
  std::vector<uint64_t> epochs;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(root, ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() != 20 || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    try {
      epochs.push_back(std::stoull(name));
    } catch (const std::out_of_range&) {
      // Not a checkpoint's name: epochs are 64-bit.
    }
  }
  std::sort(epochs.rbegin(), epochs.rend());
  return epochs;
}

std::string checkpointPath(const std::string& root, uint64_t epoch) {
  return (std::filesystem::path(root) / fmt::format("{:020}", epoch)).string();
}

// Checkpoint `epoch`'s state, opened read-only, or null when it is gone or
// holds no state (a retention removed it meanwhile, or it is damaged: the
// caller takes another one).
DbPtr openCheckpoint(const std::string& root, uint64_t epoch) {
  const std::filesystem::path dir = checkpointPath(root, epoch);
  std::ifstream in(dir / "checkpoint.meta", std::ios::binary);
  if (!in) return nullptr;
  std::stringstream text;
  text << in.rdbuf();
  std::optional<CheckpointInfo> info = parseCheckpointMeta(text.str());
  if (!info || !info->hasState) return nullptr;
  try {
    return DbPtr(rocks_detail::openCheckpointReadOnly((dir / "state").string(), epoch));
  } catch (const SqlError&) {
    return nullptr;
  }
}

// The "topic" of a reader's position in view `view` (checkpoint.h): what
// tells which of a flow's positions is in which view.
std::string viewTopic(const std::string& view) { return "view " + toLower(view); }

// "<task>=<next>,..." or "-".
std::optional<ViewChangelogEnds> parseSeqs(const std::string& text) {
  ViewChangelogEnds out;
  if (text == "-") return out;
  std::stringstream items(text);
  for (std::string item; std::getline(items, item, ',');) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos) return std::nullopt;
    try {
      out[static_cast<uint32_t>(std::stoul(item.substr(0, eq)))] = std::stoull(item.substr(eq + 1));
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return out;
}

// The newest complete checkpoint's metadata under `root`, read without
// changing anything there.
std::optional<CheckpointInfo> newestCheckpoint(const std::string& root) {
  for (uint64_t epoch : checkpointEpochs(root)) {
    std::ifstream in(std::filesystem::path(checkpointPath(root, epoch)) / "checkpoint.meta",
                     std::ios::binary);
    if (!in) continue;
    std::stringstream text;
    text << in.rdbuf();
    if (std::optional<CheckpointInfo> info = parseCheckpointMeta(text.str())) return info;
  }
  return std::nullopt;
}

class ViewChangelogSource final : public SourceTask {
 public:
  ViewChangelogSource(std::string viewName, std::string root, Schema schema)
      : view_(std::move(viewName)), root_(std::move(root)) {
    for (const Column& c : schema.columns) types_.push_back(c.type);
  }

  void poll(std::vector<SourceRecord>& out, size_t maxRecords, int timeoutMs) override {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
    const size_t before = out.size();
    for (;;) {
      if (phase_ == Phase::Start) begin();
      if (phase_ == Phase::Snapshot) readSnapshot(out, before + maxRecords);
      if (phase_ == Phase::Changes) readChanges(out, before + maxRecords);
      if (out.size() > before || std::chrono::steady_clock::now() >= deadline) return;
      // Nothing new: the view's next checkpoint is awaited in short steps.
      std::this_thread::sleep_for(std::chrono::milliseconds(std::max(1, std::min(timeoutMs, 20))));
    }
  }

  void commit() override {}

  void seek(const std::vector<PartitionProgress>& positions) override {
    for (const PartitionProgress& p : positions) {
      if (p.partition != 0 || p.position.empty()) continue;
      restore(p.position);
    }
  }

  void startFromStartingOffsets() override {
    phase_ = Phase::Start;
    seqs_.clear();
    db_.reset();
  }

  std::vector<PartitionProgress> progress() const override {
    PartitionProgress p;
    p.topic = viewTopic(view_);
    p.partition = 0;
    p.endOffset = p.startOffset = static_cast<int64_t>(changesRead_);
    p.position = token();
    return {p};
  }

  bool caughtUp(int32_t) const override { return phase_ == Phase::Changes && drained_; }
  int64_t decodeErrors() const override { return 0; }
  std::string description() const override { return "ViewChangelog[" + view_ + "]"; }

 private:
  enum class Phase { Start, Snapshot, Changes };

  // A new reader: the newest checkpoint's rows, then the changes after it.
  // A view that has not checkpointed yet has given no row: its changelog
  // from the start is everything.
  void begin() {
    for (uint64_t epoch : checkpointEpochs(root_)) {
      DbPtr db = openCheckpoint(root_, epoch);
      if (!db) continue;
      db_ = std::move(db);
      dbEpoch_ = epoch;
      seqs_ = counters(*db_);
      snapshotEpoch_ = epoch;
      lastKey_.clear();
      phase_ = Phase::Snapshot;
      return;
    }
    seqs_.clear();
    phase_ = Phase::Changes;
  }

 public:
  // Each task's next sequence number in `db`, the end of its changelog there
  // (checkpointedChangelogEnds reads it too).
  static std::map<uint32_t, uint64_t> counters(rocksdb::DB& db) {
    std::map<uint32_t, uint64_t> out;
    const std::string prefix = operatorPrefix(kViewChangelogOperatorId);
    std::unique_ptr<rocksdb::Iterator> it(db.NewIterator(rocksdb::ReadOptions()));
    for (uint32_t task = 0;; ++task) {
      it->Seek(slice(prefixOf(kViewChangelogOperatorId, task)));
      if (!it->Valid() || !view(it->key()).starts_with(prefix)) break;
      task = static_cast<uint32_t>(readBigEndian(view(it->key()).substr(4, 4)));
      const std::string counterKey =
          prefixOf(kViewChangelogOperatorId, task) + std::string(kCounterKey);
      std::string value;
      if (db.Get(rocksdb::ReadOptions(), slice(counterKey), &value).ok()) {
        out[task] = readBigEndian(value);
      }
    }
    return out;
  }


 private:
  void readSnapshot(std::vector<SourceRecord>& out, size_t limit) {
    const std::string prefix = operatorPrefix(kViewTableOperatorId);
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
    it->Seek(slice(lastKey_.empty() ? prefix : lastKey_));
    if (!lastKey_.empty() && it->Valid() && view(it->key()) == lastKey_) it->Next();
    for (; it->Valid() && out.size() < limit; it->Next()) {
      std::string_view key = view(it->key());
      if (!key.starts_with(prefix)) break;
      emit(out, RowKind::Insert, view(it->value()));
      lastKey_.assign(key);
    }
    check(*it);
    if (out.size() < limit) {
      // Every row given: the changes after this checkpoint follow.
      phase_ = Phase::Changes;
      lastKey_.clear();
    }
  }

  void readChanges(std::vector<SourceRecord>& out, size_t limit) {
    if (!db_ || drained_) {
      // The view checkpoints every second or so: its directory is listed
      // every kLookMicros at most.
      const int64_t now = monotonicMicros();
      if (now < nextLookMicros_) return;
      nextLookMicros_ = now + kLookMicros;
      if (!moveToNewerCheckpoint()) return;
    }
    const std::map<uint32_t, uint64_t> ends = counters(*db_);
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
    for (const auto& [task, end] : ends) {
      uint64_t& next = seqs_[task];
      if (next >= end) continue;
      std::string from = prefixOf(kViewChangelogOperatorId, task);
      appendBigEndian(from, next, kSeqSize);
      it->Seek(slice(from));
      for (; next < end && out.size() < limit; it->Next()) {
        if (!it->Valid() || view(it->key()).size() != kPrefixSize + kSeqSize ||
            readBigEndian(view(it->key()).substr(kPrefixSize)) != next) {
          check(*it);
          throw SqlError(sqlstate::kDataCorrupted,
                         fmt::format("the changelog of materialized view \"{}\" has no change {} "
                                     "of its task {} (checkpoint of epoch {})",
                                     view_, next, task, dbEpoch_))
              .withHint("START FLOW ... RESET STATE reads the view again from its rows");
        }
        std::string_view value = view(it->value());
        if (value.empty()) throw SqlError(sqlstate::kDataCorrupted, "an empty changelog entry");
        emit(out, static_cast<RowKind>(static_cast<uint8_t>(value[0]) & 3), value.substr(1));
        ++next;
        ++changesRead_;
      }
      if (out.size() >= limit) return;
    }
    drained_ = true;
  }

  // Opens the view's newest checkpoint when it is newer than the one read;
  // false when there is none.
  bool moveToNewerCheckpoint() {
    for (uint64_t epoch : checkpointEpochs(root_)) {
      if (db_ && epoch <= dbEpoch_) return false;
      DbPtr db = openCheckpoint(root_, epoch);
      if (!db) continue;
      const std::map<uint32_t, uint64_t> ends = counters(*db);
      for (const auto& [task, next] : seqs_) {
        auto e = ends.find(task);
        if (e == ends.end() || e->second < next) {
          // The view's changelog is behind what this reader has read: the
          // view's state was reset, or is another view's of the same name.
          throw SqlError(sqlstate::kDataCorrupted,
                         fmt::format("materialized view \"{}\" has fewer changes (checkpoint of "
                                     "epoch {}) than this flow has read",
                                     view_, epoch))
              .withHint("its state was reset: START FLOW ... RESET STATE reads it again");
        }
      }
      db_ = std::move(db);
      dbEpoch_ = epoch;
      drained_ = false;
      return true;
    }
    return false;
  }

  void emit(std::vector<SourceRecord>& out, RowKind kind, std::string_view encoded) {
    SourceRecord rec;
    rec.row = decodeRow(encoded, types_);
    rec.timestampMicros = rec.readMicros = nowMicros();
    rec.partition = 0;
    rec.offset = static_cast<int64_t>(changesRead_);
    rec.kind = kind;
    out.push_back(std::move(rec));
  }

  void check(rocksdb::Iterator& it) const {
    if (!it.status().ok()) {
      throw SqlError(sqlstate::kIoError, fmt::format("reading materialized view \"{}\" failed: {}",
                                                     view_, it.status().ToString()));
    }
  }

  // "c:<task>=<next>,..." while reading changes; "s:<epoch>:<hex last key or
  // ->:<task>=<next>,..." while reading the snapshot of checkpoint <epoch>.
  std::string token() const {
    std::string seqs;
    for (const auto& [task, next] : seqs_) {
      if (!seqs.empty()) seqs += ',';
      seqs += fmt::format("{}={}", task, next);
    }
    if (seqs.empty()) seqs = "-";
    if (phase_ == Phase::Snapshot) {
      std::string hex;
      for (char c : lastKey_) hex += fmt::format("{:02x}", static_cast<uint8_t>(c));
      return fmt::format("s:{}:{}:{}", snapshotEpoch_, hex.empty() ? "-" : hex, seqs);
    }
    if (phase_ == Phase::Start) return {};
    return "c:" + seqs;
  }

  void restore(const std::string& token) {
    auto bad = [&] {
      return SqlError(sqlstate::kDataCorrupted,
                      fmt::format("a checkpointed position '{}' of materialized view \"{}\" that "
                                  "cannot be read",
                                  token, view_));
    };
    std::vector<std::string> parts;
    std::stringstream in(token);
    for (std::string part; std::getline(in, part, ':');) parts.push_back(part);
    auto seqsOf = [&](const std::string& text) {
      std::optional<ViewChangelogEnds> out = parseSeqs(text);
      if (!out) throw bad();
      return *out;
    };
    if (parts.size() == 2 && parts[0] == "c") {
      seqs_ = seqsOf(parts[1]);
      phase_ = Phase::Changes;
      db_.reset();
      drained_ = true;
      return;
    }
    if (parts.size() != 4 || parts[0] != "s") throw bad();
    uint64_t epoch = 0;
    try {
      epoch = std::stoull(parts[1]);
    } catch (const std::exception&) {
      throw bad();
    }
    std::string key;
    if (parts[2] != "-") {
      if (parts[2].size() % 2 != 0) throw bad();
      for (size_t i = 0; i < parts[2].size(); i += 2) {
        try {
          key += static_cast<char>(std::stoul(parts[2].substr(i, 2), nullptr, 16));
        } catch (const std::exception&) {
          throw bad();
        }
      }
    }
    DbPtr db = openCheckpoint(root_, epoch);
    if (!db) {
      // The rows of the view were being read from a checkpoint that its
      // retention has removed since: they cannot be read on from where
      // this flow stopped.
      throw SqlError(sqlstate::kDataCorrupted,
                     fmt::format("the checkpoint of epoch {} of materialized view \"{}\", whose "
                                 "rows this flow was reading, is gone",
                                 epoch, view_))
          .withHint("START FLOW ... RESET STATE reads the view again from its newest rows");
    }
    db_ = std::move(db);
    dbEpoch_ = snapshotEpoch_ = epoch;
    seqs_ = seqsOf(parts[3]);
    lastKey_ = std::move(key);
    phase_ = Phase::Snapshot;
  }

  std::string view_;
  std::string root_;
  std::vector<DataTypePtr> types_;
  Phase phase_ = Phase::Start;
  DbPtr db_;              // the checkpoint being read
  uint64_t dbEpoch_ = 0;  // its epoch
  bool drained_ = false;  // every change of db_ is given
  uint64_t snapshotEpoch_ = 0;
  std::string lastKey_;                // the snapshot's last row given (its whole key)
  std::map<uint32_t, uint64_t> seqs_;  // each view task's next change to give
  uint64_t changesRead_ = 0;
  static constexpr int64_t kLookMicros = 100 * 1000;
  int64_t nextLookMicros_ = 0;
};

}  // namespace

std::optional<ViewChangelogEnds> checkpointedChangelogEnds(const std::string& checkpointRoot) {
  for (uint64_t epoch : checkpointEpochs(checkpointRoot)) {
    DbPtr db = openCheckpoint(checkpointRoot, epoch);
    if (db) return ViewChangelogSource::counters(*db);
  }
  return std::nullopt;
}

std::optional<ViewChangelogEnds> readerPosition(const std::string& checkpointRoot,
                                                const std::string& view, bool* readsView) {
  *readsView = false;
  std::optional<CheckpointInfo> info = newestCheckpoint(checkpointRoot);
  if (!info) return std::nullopt;
  const std::string topic = viewTopic(view);
  std::optional<ViewChangelogEnds> lowest;
  for (const CheckpointPosition& p : info->positions) {
    if (p.topic != topic) continue;
    *readsView = true;
    // "c:<seqs>" or "s:<epoch>:<key>:<seqs>": the changes it reads next.
    const size_t colon = p.position.rfind(':');
    if (colon == std::string::npos) return std::nullopt;
    std::optional<ViewChangelogEnds> seqs = parseSeqs(p.position.substr(colon + 1));
    if (!seqs) return std::nullopt;
    if (!lowest) {
      lowest = std::move(seqs);
      continue;
    }
    // Two scans of the view: a task either has not read yet (absent: 0).
    ViewChangelogEnds merged;
    for (const auto& [task, next] : *lowest) {
      auto other = seqs->find(task);
      if (other != seqs->end()) merged[task] = std::min(next, other->second);
    }
    lowest = std::move(merged);
  }
  if (!*readsView) return ViewChangelogEnds{};
  return lowest;
}

std::unique_ptr<SourceTask> openViewChangelogSource(std::string view, std::string checkpointRoot,
                                                    Schema schema) {
  return std::make_unique<ViewChangelogSource>(std::move(view), std::move(checkpointRoot),
                                               std::move(schema));
}

}  // namespace rtsql
