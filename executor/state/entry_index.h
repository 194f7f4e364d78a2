// EntryIndex: the hash index of a state table's cache (rocksdb_table.cpp),
// from a key to the cached entry that holds it. Keys come with their hash
// (key_hash.h), and the index keeps each entry's hash beside its pointer in
// one flat array probed linearly: finding a key reads one slot (one cache
// line, usually) and looks at an entry only when the hashes are equal, so a
// new key, which is most keys of a GROUP BY with a new group per record, is
// known absent without touching any entry. A node-based map read its bucket,
// the node before the chain and the node, each a cache miss in a cache of
// tens of thousands of entries. Growing moves the slots by their stored
// hashes, never hashing a key again; erasing shifts the slots after it back
// (no tombstones), so a long-running table's probes stay short.
//
// T has `std::string key` and `uint64_t hash`. The index does not own the
// entries.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace rtsql {

template <typename T>
class EntryIndex {
 public:
  T* find(std::string_view key, uint64_t hash) const {
    if (slots_.empty()) return nullptr;
    for (size_t i = hash & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (!s.item) return nullptr;
      if (s.hash == hash && s.item->key == key) return s.item;
    }
  }

  // Adds an entry whose key the index does not hold.
  void insert(T* item) {
    if ((count_ + 1) * 4 > slots_.size() * 3) grow();
    place(Slot{item->hash, item});
    ++count_;
  }

  // Removes an entry the index holds.
  void erase(const T* item) {
    size_t i = item->hash & mask_;
    while (slots_[i].item != item) i = (i + 1) & mask_;
    // Backward shift: a later slot of the run moves into the hole unless its
    // home lies (cyclically) after the hole and at or before it.
    for (size_t j = (i + 1) & mask_; slots_[j].item; j = (j + 1) & mask_) {
      const size_t home = slots_[j].hash & mask_;
      const bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
      if (stays) continue;
      slots_[i] = slots_[j];
      i = j;
    }
    slots_[i] = Slot{};
    --count_;
  }

  template <typename F>
  void forEach(F&& fn) const {
    for (const Slot& s : slots_)
      if (s.item) fn(*s.item);
  }

  size_t size() const { return count_; }

 private:
  struct Slot {
    uint64_t hash = 0;
    T* item = nullptr;
  };

  void place(const Slot& slot) {
    size_t i = slot.hash & mask_;
    while (slots_[i].item) i = (i + 1) & mask_;
    slots_[i] = slot;
  }

  // Doubles the slots (at most three quarters full), moving each entry by
  // its stored hash.
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 16 : old.size() * 2, Slot{});
    mask_ = slots_.size() - 1;
    for (const Slot& s : old)
      if (s.item) place(s);
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t count_ = 0;
};

}  // namespace rtsql
