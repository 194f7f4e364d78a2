// StoredKeyFilter: the keys a state table may have in RocksDB, as a Bloom
// filter over their hashes (key_hash.h). A table asks it before the read
// behind a new key (the read that keeps size() exact once the cache no longer
// holds every entry): "certainly not stored" answers without a read, "maybe"
// reads as before. A table adds every key it writes to RocksDB as a value,
// and, when it opens on stored state (a restored checkpoint), every key it
// finds there; a key erased since stays in the filter, which only costs a
// read that finds nothing.
//
// The number of keys is not known in advance, so the filter grows: it is a
// list of parts, each twice the capacity of the one before, and a key is
// added to the newest part and looked up in all of them. Each part is a
// blocked Bloom filter: a key's bits all lie in one 64-byte block, so adding
// or looking up a key in a part touches one cache line. A full part lets
// through a fraction of a percent of the absent keys, so the filter as a
// whole about that times its number of parts (11 for 5 million keys).
//
// Its memory is bounded by the caller's limit: a filter that would grow past
// it stops growing and answers "maybe" for every key from then on (the table
// reads behind each new key, as without a filter).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rtsql {

class StoredKeyFilter {
 public:
  // Keys the first part holds (7 KB); later parts double.
  static constexpr uint64_t kFirstCapacity = 4096;

  // Records a key (by its hash) as possibly stored. Returns the change in the
  // filter's bytes, for the caller's memory account: a new part's, or the
  // parts freed, negated, when growing would pass `limitBytes` and the filter
  // saturates instead.
  int64_t add(uint64_t hash, int64_t limitBytes);
  // False when no key of this hash was ever added: the key is not stored.
  bool mayContain(uint64_t hash) const;
  // Gives up: frees the parts and answers "maybe" for every key from now on
  // (what add() does past its limit). Returns the bytes freed, negated.
  int64_t saturate();
  int64_t memoryBytes() const { return bytes_; }
  bool saturated() const { return saturated_; }
  uint64_t keys() const { return keys_; }

 private:
  struct Block {
    uint64_t words[8];
  };
  struct Part {
    std::vector<Block> blocks;
    uint64_t capacity = 0;
    uint64_t count = 0;
  };

  static size_t blockOf(const Part& part, uint64_t hash);
  static void set(Part& part, uint64_t hash);
  static bool test(const Part& part, uint64_t hash);

  std::vector<Part> parts_;
  int64_t bytes_ = 0;
  uint64_t keys_ = 0;
  bool saturated_ = false;
};

}  // namespace rtsql
