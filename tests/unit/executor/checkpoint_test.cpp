#include "executor/checkpoint.h"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/crc32.h"
#include "common/error.h"
#include "executor/state/state_store.h"
#include "tests/unit/executor/state_test_util.h"

using namespace rtsql;
namespace fs = std::filesystem;

namespace {

CheckpointInfo sample(uint64_t epoch) {
  CheckpointInfo info;
  info.epoch = epoch;
  info.epochEndMicros = 1000;
  info.watermark = 123456789;
  info.positions.push_back({0, "clicks", 0, 17 + static_cast<int64_t>(epoch)});
  info.positions.push_back({0, "clicks", 1, 4});
  info.positions.push_back({1, "", 3, 99});
  info.taskWatermarks.push_back({1, 2, -5});
  return info;
}

std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void writeFile(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

}  // namespace

TEST_CASE("crc32 matches the standard check value") {
  const std::string check = "123456789";
  CHECK(crc32(check.data(), check.size()) == 0xCBF43926u);
  CHECK(crc32("", 0) == 0u);
}

TEST_CASE("checkpoint metadata round-trips and rejects damage") {
  CheckpointInfo info = sample(7);
  info.hasState = true;
  info.stateBytes = 4096;
  std::string text = formatCheckpointMeta(info);
  auto back = parseCheckpointMeta(text);
  REQUIRE(back);
  CHECK(back->epoch == 7);
  CHECK(back->watermark == 123456789);
  CHECK(back->hasState);
  CHECK(back->stateBytes == 4096);
  REQUIRE(back->positions.size() == 3);
  CHECK(back->positions[0].topic == "clicks");
  CHECK(back->positions[0].offset == 24);
  CHECK(back->positions[1].partition == 1);
  CHECK(back->positions[2].scan == 1);
  CHECK(back->positions[2].topic.empty());
  CHECK(back->positions[2].offset == 99);
  REQUIRE(back->taskWatermarks.size() == 1);
  CHECK(back->taskWatermarks[0].stage == 1);
  CHECK(back->taskWatermarks[0].task == 2);
  CHECK(back->taskWatermarks[0].watermark == -5);

  SUBCASE("every truncation is detected") {
    for (size_t n = 0; n < text.size(); ++n) {
      CHECK_MESSAGE(!parseCheckpointMeta(text.substr(0, n)), "prefix of ", n, " bytes parsed");
    }
  }
  SUBCASE("a flipped byte in the body is detected") {
    std::string bad = text;
    bad[bad.size() - 3] = bad[bad.size() - 3] == '1' ? '2' : '1';
    CHECK(!parseCheckpointMeta(bad));
  }
  SUBCASE("trailing garbage is detected") { CHECK(!parseCheckpointMeta(text + "x")); }
  SUBCASE("other files are not checkpoints") {
    CHECK(!parseCheckpointMeta(""));
    CHECK(!parseCheckpointMeta("hello\nworld\n"));
  }
}

TEST_CASE("checkpoint metadata keeps each position's resume token") {
  CheckpointInfo info = sample(8);
  info.positions[0].position = "after:49590338271490256608559692538361571095921575989136588898";
  info.positions[2].position = "end";
  auto back = parseCheckpointMeta(formatCheckpointMeta(info));
  REQUIRE(back);
  REQUIRE(back->positions.size() == 3);
  CHECK(back->positions[0].position == info.positions[0].position);
  CHECK(back->positions[0].offset == info.positions[0].offset);
  CHECK(back->positions[1].position.empty());
  CHECK(back->positions[2].position == "end");
  CHECK(back->positions[2].offset == info.positions[2].offset);
}

TEST_CASE("checkpoints are written atomically, found newest first, and retained") {
  testing::TempDir tmp("ckpt_test");
  CheckpointDir dir(tmp.sub("ckpt"), 2);
  CHECK(!dir.latest());
  CHECK(!dir.everWritten());
  // A first write killed half-way leaves its leftovers only: no checkpoint
  // was ever written, and recovery may start the flow without one.
  fs::create_directories(tmp.sub("ckpt") + "/00000000000000000001.tmp/state");
  CHECK(!dir.everWritten());

  for (uint64_t e = 1; e <= 4; ++e) {
    CheckpointInfo info = sample(e);
    dir.write(info, {});
    CHECK(fs::exists(fs::path(info.dir) / "checkpoint.meta"));
    CHECK(info.durationMicros >= 0);
  }
  // Retention keeps the newest two.
  CHECK(dir.epochs() == std::vector<uint64_t>{3, 4});
  CHECK(dir.everWritten());
  auto latest = dir.latest();
  REQUIRE(latest);
  CHECK(latest->epoch == 4);
  CHECK(latest->positions[0].offset == 21);
  // Bounded by an epoch (exactly-once recovery).
  CHECK(dir.latest(3)->epoch == 3);
  CHECK(!dir.latest(2));

  SUBCASE("an interrupted write leaves nothing that counts, and is cleaned") {
    fs::create_directories(tmp.sub("ckpt") + "/00000000000000000005.tmp/state");
    writeFile(tmp.sub("ckpt") + "/00000000000000000005.tmp/checkpoint.meta", "rtsql-checkpoint 1 9");
    auto l = dir.latest();
    REQUIRE(l);
    CHECK(l->epoch == 4);
    CHECK(!fs::exists(tmp.sub("ckpt") + "/00000000000000000005.tmp"));
  }
  SUBCASE("a torn metadata file falls back to the previous checkpoint") {
    fs::path meta = fs::path(latest->dir) / "checkpoint.meta";
    std::string text = readFile(meta);
    writeFile(meta, text.substr(0, text.size() / 2));
    auto l = dir.latest();
    REQUIRE(l);
    CHECK(l->epoch == 3);
    // The search says which checkpoint it passed over, and why.
    CheckpointSearch found = dir.search();
    REQUIRE(found.found);
    CHECK(found.found->epoch == 3);
    REQUIRE(found.skipped.size() == 1);
    CHECK(found.skipped[0].epoch == 4);
    CHECK(found.skipped[0].reason.find("damaged") != std::string::npos);
  }
  SUBCASE("with every metadata file damaged nothing is found, and every one is reported") {
    for (uint64_t e : dir.epochs()) {
      writeFile(fs::path(tmp.sub("ckpt")) / fmt::format("{:020}", e) / "checkpoint.meta", "garbage");
    }
    CheckpointSearch found = dir.search();
    CHECK(!found.found);
    REQUIRE(found.skipped.size() == 2);
    CHECK(found.skipped[0].epoch == 4);
    CHECK(found.skipped[1].epoch == 3);
  }
  SUBCASE("a missing state directory makes a stateful checkpoint unusable") {
    CheckpointInfo info = sample(5);
    info.hasState = true;
    dir.write(info, [](const std::string& d) {
      fs::create_directories(d);
      writeFile(fs::path(d) / "000001.sst", "sst bytes");
    });
    CHECK(dir.latest()->epoch == 5);
    fs::remove_all(fs::path(info.dir) / "state");
    CHECK(dir.latest()->epoch == 4);
  }
}

TEST_CASE("a reset removes every checkpoint and stays pending until a checkpoint after it") {
  testing::TempDir tmp("ckpt_test");
  CheckpointDir dir(tmp.sub("ckpt"), 3);
  CHECK(!dir.pendingReset());
  for (uint64_t e = 1; e <= 3; ++e) {
    CheckpointInfo info = sample(e);
    dir.write(info, {});
  }
  dir.markReset(4);
  CHECK(dir.epochs().empty());
  CHECK(!dir.latest());
  REQUIRE(dir.pendingReset());
  CHECK(*dir.pendingReset() == 4);
  // A checkpoint is written, but the reset is done only when the runtime says
  // so (after an exactly-once sink committed that epoch).
  CheckpointInfo info = sample(4);
  dir.write(info, {});
  CHECK(dir.pendingReset());
  dir.clearReset();
  CHECK(!dir.pendingReset());
  CHECK(dir.latest()->epoch == 4);
  dir.clearReset();  // nothing pending: nothing happens
}

TEST_CASE("a state snapshot restores exactly the state at the barrier") {
  testing::TempDir tmp("ckpt_test");
  std::string stateDir = tmp.sub("state");
  CheckpointDir dir(tmp.sub("ckpt"), 3);
  CheckpointInfo info = sample(1);
  info.hasState = true;
  {
    StateStoreOptions o;
    o.path = stateDir;
    auto store = StateStore::open(o);
    auto table = store->table(1, 0);
    table->put("a", "1");
    table->put("b", "2");
    table->flush();
    // The task reached its barrier: writes after it are held back from RocksDB
    // until the snapshot, even when a scan runs or the cache evicts.
    store->holdWrites(1, 0, true);
    table->put("c", "3");
    table->erase("a");
    std::vector<std::string> seen;
    table->scan("", "", [&](std::string_view k, std::string_view v) {
      seen.push_back(std::string(k) + "=" + std::string(v));
      return true;
    });
    CHECK(seen == std::vector<std::string>{"b=2", "c=3"});
    dir.write(info, [&](const std::string& d) { store->snapshot(d); });
    store->holdWrites(1, 0, false);
    table->flush();
  }
  CHECK(info.stateBytes > 0);
  CheckpointDir::restoreState(*dir.latest(), stateDir);
  StateStoreOptions o;
  o.path = stateDir;
  auto store = StateStore::open(o);
  auto table = store->table(1, 0);
  std::string v;
  CHECK(table->get("a", v));
  CHECK(v == "1");
  CHECK(table->get("b", v));
  CHECK(!table->get("c", v));
  CHECK(table->size() == 2);
}
