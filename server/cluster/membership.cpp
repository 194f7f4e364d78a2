#include "server/cluster/membership.h"

#include <fmt/format.h>
#include <librdkafka/rdkafka.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "common/clock.h"
#include "common/crc32.h"
#include "common/error.h"
#include "common/json.h"
#include "common/log.h"
#include "common/options.h"
#include "common/schema.h"
#include "connectors/kafka/client.h"
#include "connectors/kafka/sink_topic.h"
#include "planner/shard_plan.h"
#include "server/cluster/node_record.h"

namespace rtsql {

namespace {

constexpr int kSlots = 16;
constexpr int kMembershipPollMs = 100;
constexpr int kMembershipTopicWaitMs = 15000;
// How often the holders of the other slots are read again.
constexpr int64_t kHoldersEveryMicros = 3'000'000;
// How often a node claims its slots again although they did not move: no
// node joins the holders group, and Kafka expires the offsets of a group
// without members (offsets.retention.minutes, 7 days by default).
constexpr int64_t kClaimAgainEveryMicros = 600'000'000;
void clusterLog(const std::string& msg) { logLine("cluster: " + msg); }

using PartitionList = std::unique_ptr<rd_kafka_topic_partition_list_t,
                                      decltype(&rd_kafka_topic_partition_list_destroy)>;

PartitionList partitionList(int size) {
  return PartitionList(rd_kafka_topic_partition_list_new(size),
                       rd_kafka_topic_partition_list_destroy);
}

std::set<int> slotsOf(const rd_kafka_topic_partition_list_t* parts) {
  std::set<int> out;
  for (int i = 0; i < parts->cnt; ++i) out.insert(parts->elems[i].partition);
  return out;
}

std::string slotList(const std::set<int>& slots) {
  std::string out;
  for (int s : slots) out += (out.empty() ? "" : ",") + std::to_string(s);
  return out.empty() ? "none" : out;
}

}  // namespace

std::string clusterSlotsTopic(const std::string& cluster) {
  return "_rtsql-" + cluster + "-slots";
}

int flowSlot(const std::string& name, int slots) {
  if (slots <= 0) return 0;
  // Copy i of a sharded flow takes the slot i after the flow's, so that its
  // copies go to consecutive slots, and so over the nodes.
  if (auto shard = splitShardFlowName(name))
    return (flowSlot(shard->first, slots) + shard->second) % slots;
  const std::string key = toLower(name);
  return static_cast<int>(crc32(key.data(), key.size()) % static_cast<uint32_t>(slots));
}

std::vector<int> placeFlowSlots(int first, int pieces, int slots,
                                const std::map<int, std::string>& holders) {
  std::vector<int> out;
  if (slots <= 0 || pieces <= 0) return out;
  first = ((first % slots) + slots) % slots;
  out.push_back(first);
  // Each node's slots, from `first` on, coming round.
  std::map<std::string, std::vector<int>> slotsOf;
  std::vector<std::vector<int>> unknown;  // a slot no node is known to hold, each
  for (int i = 0; i < slots; ++i) {
    const int slot = (first + i) % slots;
    if (auto it = holders.find(slot); it != holders.end()) {
      slotsOf[it->second].push_back(slot);
    } else if (slot != first) {
      unknown.push_back({slot});
    }
  }
  if (slotsOf.empty()) {
    for (int i = 1; i < pieces; ++i)
      out.push_back(static_cast<int>((first + static_cast<int64_t>(i) * slots / pieces) % slots));
    return out;
  }
  struct Node {
    const std::vector<int>* slots;
    size_t next = 0;  // its first slot no piece has yet
    int pieces = 0;
  };
  // The nodes in name order from piece 0's holder on (from the first when
  // it is not known), coming round, then each slot of no known holder as a
  // node of its own (this node's slots are always known, so such a slot is
  // another node's or nobody's).
  std::vector<Node> nodes;
  std::vector<const std::vector<int>*> known;
  for (const auto& [name, owned] : slotsOf) known.push_back(&owned);
  size_t start = 0;
  const auto owner = holders.find(first);
  if (owner != holders.end())
    start = static_cast<size_t>(std::distance(slotsOf.begin(), slotsOf.find(owner->second)));
  for (size_t k = 0; k < known.size(); ++k)
    nodes.push_back(Node{known[(start + k) % known.size()]});
  for (const std::vector<int>& slot : unknown) nodes.push_back(Node{&slot});
  if (owner != holders.end()) {
    // `first` heads its holder's slots: the next piece there takes the next one.
    nodes.front().next = 1;
    nodes.front().pieces = 1;
  }
  for (int i = 1; i < pieces; ++i) {
    Node* pick = nullptr;
    for (Node& n : nodes) {
      if (n.next < n.slots->size() && (!pick || n.pieces < pick->pieces)) pick = &n;
    }
    if (!pick) {
      // Every slot has a piece: the rest take them again, in the same order.
      const size_t placed = out.size();
      for (int j = i; j < pieces; ++j) out.push_back(out[static_cast<size_t>(j) % placed]);
      break;
    }
    out.push_back((*pick->slots)[pick->next++]);
    ++pick->pieces;
  }
  return out;
}

struct ClusterMembership::Impl {
  ClusterOptions options;
  std::string topic;
  kafka::HandlePtr consumer;
  // Claims and reads who holds each slot, as offsets of the group
  // `_rtsql-<NAME>-holders`, which no node joins: a commit there does not
  // depend on the nodes group's generation, so a claim during a rebalance
  // cannot fail it (with librdkafka 2.0 a failed commit in the nodes group
  // counts as the loss of the node's whole assignment, which moves all of
  // its flows and starts a rebalance of its own).
  kafka::HandlePtr holdersClient;
  std::function<void()> released;
  std::function<void()> changed;

  mutable std::mutex mu;
  std::set<int> held;                  // the slots this node holds
  std::map<int, std::string> holders;  // each slot's last taker, as the group's offsets say
  // Each flow's recorded slots (setFlowSlots), by lower-cased name.
  std::map<std::string, std::vector<int>> flowSlots;
  bool heldChanged = false;            // this node's slots are to be claimed (again)
  std::set<std::string> seenNodes;     // the nodes readHolders last saw holding slots
  // Each node's advertised PostgreSQL address, from its records.
  std::map<std::string, std::string> addresses;
  std::string claimedAddress;  // the address this node's last claim advertised

  std::atomic<bool> stopping{false};
  std::atomic<bool> joined{false};  // the group has given this node an assignment (maybe empty)
  std::thread thread;

  void setHeld(std::set<int> next) {
    bool gaveUp = false;
    {
      std::lock_guard lock(mu);
      if (next == held) return;
      gaveUp = !std::includes(next.begin(), next.end(), held.begin(), held.end());
      held = std::move(next);
      heldChanged = true;
      for (int s : held) holders[s] = options.node;
    }
    // Only a loss waits on the engine: slots taken are started by its
    // supervisor, so the group's callback returns at once and the node
    // rejoins in time for the next rebalance.
    if (gaveUp && released) released();
    if (changed) changed();
  }

  // The rebalance callback: on the membership thread, inside poll.
  void rebalance(rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* parts) {
    joined = true;
    const bool cooperative =
        std::strcmp(rd_kafka_rebalance_protocol(consumer.get()), "COOPERATIVE") == 0;
    std::set<int> next;
    {
      std::lock_guard lock(mu);
      next = held;
    }
    if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
      for (int i = 0; i < parts->cnt; ++i) next.insert(parts->elems[i].partition);
      if (cooperative) {
        if (rd_kafka_error_t* e = rd_kafka_incremental_assign(consumer.get(), parts)) {
          clusterLog(fmt::format("cannot take slots: {}", rd_kafka_error_string(e)));
          rd_kafka_error_destroy(e);
          return;
        }
      } else {
        rd_kafka_assign(consumer.get(), parts);
      }
      clusterLog(fmt::format("node \"{}\" takes slots {}; holds {}", options.node,
                          slotList(slotsOf(parts)), slotList(next)));
      setHeld(std::move(next));
      return;
    }
    // Revoked or lost: the flows stop before another node may start them.
    for (int i = 0; i < parts->cnt; ++i) next.erase(parts->elems[i].partition);
    if (!cooperative) next.clear();
    clusterLog(fmt::format("node \"{}\" {} slots {}; holds {}", options.node,
                        rd_kafka_assignment_lost(consumer.get()) ? "lost" : "gives up",
                        slotList(slotsOf(parts)), slotList(next)));
    setHeld(std::move(next));
    if (cooperative) {
      if (rd_kafka_error_t* e = rd_kafka_incremental_unassign(consumer.get(), parts)) {
        rd_kafka_error_destroy(e);
      }
    } else {
      rd_kafka_assign(consumer.get(), nullptr);
    }
  }

  // Tells the others which slots this node holds: offset 0 of each, with the
  // node's name as its metadata.
  void claim(const std::set<int>& slots) {
    if (slots.empty()) return;
    NodeRecord record{options.node, {}};
    if (options.advertised) record.pgAddress = options.advertised->get();
    const std::string metadata = encodeNodeRecord(record);
    PartitionList list = partitionList(static_cast<int>(slots.size()));
    for (int s : slots) {
      rd_kafka_topic_partition_t* p =
          rd_kafka_topic_partition_list_add(list.get(), topic.c_str(), s);
      p->offset = 0;
      // The list frees the metadata.
      p->metadata = std::malloc(metadata.size());
      std::memcpy(p->metadata, metadata.data(), metadata.size());
      p->metadata_size = metadata.size();
    }
    rd_kafka_resp_err_t err = rd_kafka_commit(holdersClient.get(), list.get(), /*async=*/0);
    std::lock_guard lock(mu);
    if (err) {
      heldChanged = true;  // try again
    } else {
      claimedAddress = record.pgAddress;
    }
  }

  // Reads which node last claimed each slot.
  void readHolders(int slotCount) {
    PartitionList list = partitionList(slotCount);
    for (int s = 0; s < slotCount; ++s)
      rd_kafka_topic_partition_list_add(list.get(), topic.c_str(), s);
    if (rd_kafka_committed(holdersClient.get(), list.get(), 5000)) return;
    std::set<std::string> nodes;
    {
      std::lock_guard lock(mu);
      for (int i = 0; i < list->cnt; ++i) {
        const auto& p = list->elems[i];
        if (held.count(p.partition)) continue;
        std::optional<NodeRecord> record;
        if (!p.err && p.offset >= 0 && p.metadata)
          record = decodeNodeRecord(
              std::string_view(static_cast<const char*>(p.metadata), p.metadata_size));
        if (!record) {
          holders.erase(p.partition);
        } else {
          holders[p.partition] = record->node;
          // A node's records all say the same once it claimed again; the
          // last one read stands meanwhile.
          if (record->pgAddress.empty()) {
            addresses.erase(record->node);
          } else {
            addresses[record->node] = record->pgAddress;
          }
        }
      }
      for (const auto& [slot, node] : holders) nodes.insert(node);
      if (!held.empty()) nodes.insert(options.node);
    }
    // Which nodes this one knows to hold slots is what CREATE FLOW spreads
    // a flow's copies over (placeFlowSlots): said when it changes.
    if (nodes != seenNodes) {
      seenNodes = nodes;
      std::string names;
      for (const std::string& n : nodes) names += (names.empty() ? "" : ", ") + n;
      clusterLog(fmt::format("node \"{}\" sees slots held by nodes {}", options.node,
                             names.empty() ? std::string("none") : names));
    }
  }

  void run(int slotCount) {
    int64_t nextHolders = 0;
    int64_t nextClaim = 0;
    bool fatal = false;
    while (!stopping.load()) {
      rd_kafka_message_t* m = rd_kafka_consumer_poll(consumer.get(), kMembershipPollMs);
      if (m) {
        if (m->err == RD_KAFKA_RESP_ERR__FATAL && !fatal) {
          fatal = true;
          char reason[512];
          rd_kafka_fatal_error(consumer.get(), reason, sizeof reason);
          clusterLog(fmt::format(
              "node \"{}\" left the cluster's group and runs no flow any more: {} (is another "
              "node running under the name \"{}\"? each node needs a name of its own)",
              options.node, reason, options.node));
          setHeld({});
        } else if (m->err && m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
          // A broker away: librdkafka retries; the slots stay until the
          // group says otherwise.
        }
        rd_kafka_message_destroy(m);
      }
      if (fatal) continue;
      bool claimNow = false;
      std::set<int> mine;
      const int64_t now = monotonicMicros();
      {
        std::lock_guard lock(mu);
        // An address set after the slots were claimed (the listener bound
        // after the group's first assignment) is claimed with them again.
        const bool moved = options.advertised && !held.empty() &&
                           options.advertised->get() != claimedAddress;
        claimNow = heldChanged || moved || (now >= nextClaim && !held.empty());
        heldChanged = false;
        mine = held;
      }
      if (claimNow) {
        claim(mine);
        nextClaim = now + kClaimAgainEveryMicros;
      }
      if (claimNow || now >= nextHolders) {
        readHolders(slotCount);
        nextHolders = now + kHoldersEveryMicros;
      }
    }
  }
};

ClusterMembership::ClusterMembership(ClusterOptions options)
    : options_(std::move(options)), impl_(std::make_unique<Impl>()) {
  impl_->options = options_;
  impl_->topic = clusterSlotsTopic(options_.name);
  const std::string group = "_rtsql-" + options_.name + "-nodes";
  const std::string timeout = std::to_string(options_.nodeTimeoutMs);
  const std::string heartbeat = std::to_string(std::max(500, options_.nodeTimeoutMs / 5));
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set_opaque(conf, impl_.get());
  rd_kafka_conf_set_rebalance_cb(
      conf, [](rd_kafka_t*, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* parts,
               void* opaque) { static_cast<Impl*>(opaque)->rebalance(err, parts); });
  kafka::installLogging(conf);
  const std::pair<const char*, std::string> settings[] = {
      {"bootstrap.servers", options_.bootstrap},
      {"client.id", "rtsqld-node"},
      {"group.id", group},
      {"group.instance.id", options_.node},
      {"partition.assignment.strategy", "cooperative-sticky"},
      {"session.timeout.ms", timeout},
      {"heartbeat.interval.ms", heartbeat},
      {"enable.auto.commit", "false"},
      {"enable.auto.offset.store", "false"},
      {"auto.offset.reset", "latest"},
      {"fetch.wait.max.ms", "500"},
  };
  for (const auto& [name, value] : settings) kafka::setProperty(conf, name, value, SqlError::npos);
  kafka::refuseAutoCreate(conf);
  impl_->consumer = kafka::newHandle(RD_KAFKA_CONSUMER, conf);
  rd_kafka_conf_t* holdersConf = rd_kafka_conf_new();
  kafka::installLogging(holdersConf);
  const std::pair<const char*, std::string> holdersSettings[] = {
      {"bootstrap.servers", options_.bootstrap},
      {"client.id", "rtsqld-node-holders"},
      {"group.id", "_rtsql-" + options_.name + "-holders"},
      {"enable.auto.commit", "false"},
      {"enable.auto.offset.store", "false"},
  };
  for (const auto& [name, value] : holdersSettings)
    kafka::setProperty(holdersConf, name, value, SqlError::npos);
  kafka::refuseAutoCreate(holdersConf);
  impl_->holdersClient = kafka::newHandle(RD_KAFKA_CONSUMER, holdersConf);
  kafka::InternalTopic topic = kafka::ensureInternalTopic(
      impl_->consumer.get(), options_.bootstrap, impl_->topic, kSlots, {}, kMembershipTopicWaitMs,
      "create the topic (its partitions are the cluster's slots), or check the broker's ACLs");
  if (!topic.notCreated.empty()) {
    clusterLog(fmt::format("{}; using the topic the broker created on demand ({} slots)",
                        topic.notCreated, topic.partitions));
  }
  slotCount_ = topic.partitions;
}

ClusterMembership::~ClusterMembership() {
  stop();
}

void ClusterMembership::start(std::function<void()> released, std::function<void()> changed) {
  impl_->released = std::move(released);
  impl_->changed = std::move(changed);
  rd_kafka_poll_set_consumer(impl_->consumer.get());
  PartitionList topics = partitionList(1);
  rd_kafka_topic_partition_list_add(topics.get(), impl_->topic.c_str(), RD_KAFKA_PARTITION_UA);
  if (rd_kafka_resp_err_t err = rd_kafka_subscribe(impl_->consumer.get(), topics.get())) {
    throw SqlError(sqlstate::kConnectionFailure,
                   fmt::format("cannot join the cluster's group on {}: {}", options_.bootstrap,
                               rd_kafka_err2str(err)));
  }
  const int slotCount = slotCount_;
  impl_->thread = std::thread([this, slotCount] { impl_->run(slotCount); });
  pthread_setname_np(impl_->thread.native_handle(), "cluster-nodes");
}

void ClusterMembership::stop() {
  if (impl_->stopping.exchange(true)) return;
  if (impl_->thread.joinable()) impl_->thread.join();
  impl_->released = nullptr;  // the engine is going away: nothing to tell it
  impl_->changed = nullptr;
  // With a static membership, closing does not leave the group: the node's
  // slots stay its own for the session timeout, so a restart within it takes
  // them back without moving anything.
  if (!impl_->consumer) return;
  if (!impl_->joined.load()) {
    // librdkafka 2.0 asserts when a cooperative-sticky consumer that never
    // joined its group is destroyed (fixed in 2.1). Stopping is the process's
    // end: the handle is left to it.
    (void)impl_->consumer.release();
    return;
  }
  rd_kafka_consumer_close(impl_->consumer.get());
}

void ClusterMembership::setFlowSlots(const std::string& flow, std::vector<int> slots) {
  std::lock_guard lock(impl_->mu);
  if (slots.empty()) {
    impl_->flowSlots.erase(toLower(flow));
  } else {
    impl_->flowSlots[toLower(flow)] = std::move(slots);
  }
}

int ClusterMembership::slotOf(const std::string& name) const {
  if (slotCount_ <= 0) return 0;
  const std::string key = toLower(name);
  const auto copy = splitShardFlowName(key);
  {
    std::lock_guard lock(impl_->mu);
    auto it = impl_->flowSlots.find(copy ? copy->first : key);
    const size_t index = copy ? static_cast<size_t>(copy->second) : 0;
    if (it != impl_->flowSlots.end() && index < it->second.size())
      return it->second[index] % slotCount_;
  }
  return flowSlot(key, slotCount_);
}

std::map<int, std::string> ClusterMembership::holdersNow() const {
  std::lock_guard lock(impl_->mu);
  std::map<int, std::string> out;
  for (const auto& [slot, node] : impl_->holders) {
    // A slot this node gave up names it until the holders are read again:
    // its holder is not known yet.
    if (node != options_.node || impl_->held.count(slot)) out.emplace(slot, node);
  }
  for (int slot : impl_->held) out[slot] = options_.node;
  return out;
}

bool ClusterMembership::holds(const std::string& name) const {
  const int slot = slotOf(name);
  std::lock_guard lock(impl_->mu);
  return impl_->held.count(slot) > 0;
}

std::optional<std::string> ClusterMembership::holderOf(const std::string& name) const {
  return holderOfSlot(slotOf(name));
}

std::set<int> ClusterMembership::held() const {
  std::lock_guard lock(impl_->mu);
  return impl_->held;
}

std::optional<std::string> ClusterMembership::holderOfSlot(int slot) const {
  std::lock_guard lock(impl_->mu);
  if (impl_->held.count(slot)) return options_.node;
  auto it = impl_->holders.find(slot);
  if (it == impl_->holders.end() || it->second == options_.node) return std::nullopt;
  return it->second;
}

PartitionShare ClusterMembership::share(const std::string& name, int partitions) const {
  PartitionShare out;
  out.firstSlot = flowSlot(name, slotCount_);
  out.slotCount = slotCount_;
  std::lock_guard lock(impl_->mu);
  if (auto it = impl_->flowSlots.find(toLower(name)); it != impl_->flowSlots.end())
    out.order = it->second;
  for (int i = 0; i < partitions; ++i) {
    if (const int slot = out.slotOf(i); impl_->held.count(slot)) out.held.insert(slot);
  }
  return out;
}

std::set<std::string> ClusterMembership::otherReaders(const std::string& name,
                                                      int partitions) const {
  std::set<std::string> out;
  const PartitionShare all = share(name, partitions);
  std::set<int> slots;
  for (int i = 0; i < partitions; ++i) slots.insert(all.slotOf(i));
  for (int slot : slots) {
    std::optional<std::string> node = holderOfSlot(slot);
    if (node && *node != options_.node) out.insert(*node);
  }
  return out;
}

std::optional<std::string> ClusterMembership::addressOf(const std::string& node) const {
  if (node == options_.node)
    return options_.advertised ? std::optional(options_.advertised->get()) : std::nullopt;
  std::lock_guard lock(impl_->mu);
  auto it = impl_->addresses.find(node);
  if (it == impl_->addresses.end()) return std::nullopt;
  return it->second;
}

std::set<std::string> ClusterMembership::nodes() const {
  std::set<std::string> out;
  std::lock_guard lock(impl_->mu);
  for (const auto& [slot, node] : impl_->holders) out.insert(node);
  if (impl_->joined.load()) out.insert(options_.node);
  return out;
}

std::vector<std::string> ClusterMembership::standbysOf(const std::string& name,
                                                       int replicas) const {
  std::optional<std::string> owner = holderOf(name);  // this node when it holds it
  if (!owner) return {};
  return standbyNodes(*owner, nodes(), replicas);
}

std::vector<std::string> standbyNodes(const std::string& owner, const std::set<std::string>& nodes,
                                      int replicas) {
  std::vector<std::string> out;
  auto it = nodes.upper_bound(owner);
  for (size_t seen = 0; seen < nodes.size() && static_cast<int>(out.size()) < replicas; ++seen) {
    if (it == nodes.end()) it = nodes.begin();
    if (*it != owner) out.push_back(*it);
    ++it;
  }
  return out;
}

}  // namespace rtsql
