// Option values that are credentials (the Kafka client's sasl.password,
// ssl.key.password, ssl.key.pem, sasl.oauthbearer.client.secret, ..., an HTTP
// sink's Authorization, Cookie or API key header): SHOW, DESCRIBE and SHOW
// CREATE are open to every user of the server, so they show them masked to
// all but those who may see them.
#pragma once

#include <string_view>
#include <vector>

#include "common/options.h"
#include "common/schema.h"

namespace rtsql {

inline constexpr const char* kMasked = "********";

inline bool isSecretOption(std::string_view key) {
  const std::string k = toLower(key);
  for (const char* word : {"password", "secret", "key.pem", "oauthbearer.config", "token",
                           "authorization", "cookie", "api-key", "apikey"}) {
    if (k.find(word) != std::string::npos) return true;
  }
  return false;
}

inline Options masked(const Options& o) {
  std::vector<OptionEntry> entries = o.entries();
  for (auto& e : entries) {
    if (isSecretOption(e.key)) e.value = kMasked;
  }
  return Options(std::move(entries));
}

}  // namespace rtsql
