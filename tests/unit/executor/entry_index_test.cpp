#include "executor/state/entry_index.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "executor/state/key_hash.h"

using namespace rtsql;

namespace {

struct Item {
  std::string key;
  uint64_t hash = 0;
};

std::vector<std::unique_ptr<Item>> items(int n, uint64_t (*hashOf)(const std::string&)) {
  std::vector<std::unique_ptr<Item>> out;
  for (int i = 0; i < n; ++i) {
    auto it = std::make_unique<Item>();
    it->key = "key-" + std::to_string(i);
    it->hash = hashOf(it->key);
    out.push_back(std::move(it));
  }
  return out;
}

// Checks that exactly the items marked present are found, each as itself.
void checkFinds(const EntryIndex<Item>& index, const std::vector<std::unique_ptr<Item>>& all,
                const std::vector<bool>& present) {
  size_t wrong = 0, count = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    Item* found = index.find(all[i]->key, all[i]->hash);
    if (present[i] ? found != all[i].get() : found != nullptr) ++wrong;
    if (present[i]) ++count;
  }
  CHECK(wrong == 0);
  CHECK(index.size() == count);
}

void insertAndEraseAtRandom(uint64_t (*hashOf)(const std::string&), int n) {
  auto all = items(n, hashOf);
  EntryIndex<Item> index;
  std::vector<bool> present(all.size(), false);
  for (size_t i = 0; i < all.size(); ++i) {
    index.insert(all[i].get());
    present[i] = true;
  }
  checkFinds(index, all, present);
  std::vector<size_t> order(all.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::mt19937 rng(7);
  std::shuffle(order.begin(), order.end(), rng);
  // Half erased, a quarter put back, then all erased: runs that wrap around
  // the end of the slots and are shifted back many times.
  for (size_t k = 0; k < order.size() / 2; ++k) {
    index.erase(all[order[k]].get());
    present[order[k]] = false;
  }
  checkFinds(index, all, present);
  for (size_t k = 0; k < order.size() / 4; ++k) {
    index.insert(all[order[k]].get());
    present[order[k]] = true;
  }
  checkFinds(index, all, present);
  for (size_t i = 0; i < all.size(); ++i)
    if (present[i]) index.erase(all[i].get());
  std::fill(present.begin(), present.end(), false);
  checkFinds(index, all, present);
  size_t visited = 0;
  index.forEach([&](const Item&) { ++visited; });
  CHECK(visited == 0);
}

}  // namespace

TEST_CASE("entry index: finds what it holds through growth, erases and re-inserts") {
  insertAndEraseAtRandom([](const std::string& k) { return stateKeyHash(k); }, 50000);
}

TEST_CASE("entry index: keys of equal hashes are told apart by their bytes") {
  // Every key hashes alike (one long run of slots), or to one of 8 values.
  insertAndEraseAtRandom([](const std::string&) { return uint64_t{42}; }, 500);
  insertAndEraseAtRandom([](const std::string& k) { return stateKeyHash(k) % 8; }, 2000);
}
