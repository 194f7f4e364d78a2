// What a node of a cluster tells the others about itself when it claims its
// slots (server/cluster/membership.h): the metadata of each claimed offset.
//
// A record is the node's name, then one `key=value` field per line:
//
//   a
//   pg=10.0.0.5:5433
//
// `pg` is the address its PostgreSQL listener is reached at (rtsqld
// --advertise-address), which a read of a materialized view held there is
// sent to (server/views/view_forward.h). A record of a node from before the
// fields (its name alone) still reads: its address is not known, and a read
// of a view it holds is refused naming it, as it was then. Fields of unknown
// keys are skipped, so that later ones do not break this reader.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace rtsql {

struct NodeRecord {
  std::string node;
  std::string pgAddress;  // host:port; empty when the record has none
};

std::string encodeNodeRecord(const NodeRecord& record);
// Nullopt for a record with an empty name or longer than kMaxNodeRecordBytes.
std::optional<NodeRecord> decodeNodeRecord(std::string_view bytes);

// A record is read from Kafka, which another program could have written:
// anything longer is not one.
inline constexpr size_t kMaxNodeRecordBytes = 1024;

// Whether `address` is a host:port an advertised address may be: a host of
// letters, digits, '.', '-', '_' (or an IPv6 address in brackets) and a port
// from 1 to 65535.
bool validNodeAddress(std::string_view address);
// The host and port of a valid address (brackets of an IPv6 host removed).
std::pair<std::string, std::string> splitNodeAddress(std::string_view address);

// The address this node advertises, set once its listener is bound (its
// port may be chosen then), read by the membership at each claim.
class AdvertisedAddress {
 public:
  void set(std::string address) {
    std::lock_guard lock(mu_);
    value_ = std::move(address);
  }
  std::string get() const {
    std::lock_guard lock(mu_);
    return value_;
  }

 private:
  mutable std::mutex mu_;
  std::string value_;
};

}  // namespace rtsql
