// rtsqld: the rtsql server. Parses the command line, starts the embedded or
// the local Kafka broker when asked, the engine and the PostgreSQL-protocol
// listener, and stops every flow cleanly on SIGINT/SIGTERM (then the local
// broker).
#include <fmt/ranges.h>
#include <termios.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <boost/asio.hpp>
#include <atomic>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/python/function.h"
#include "common/json.h"
#include "common/kafka_topic_name.h"
#include "common/log.h"
#include "connectors/embedded/broker.h"
#include "connectors/local/broker.h"
#include "connectors/net/http_client.h"
#include "connectors/net/outbound_policy.h"
#include "connectors/provider.h"
#include "server/cluster/catalog.h"
#include "server/cluster/node_record.h"
#include "server/config_file.h"
#include "server/engine.h"
#include "server/memory_trim.h"
#include "server/http/engine_source.h"
#include "server/http/http_server.h"
#include "server/pgwire/auth.h"
#include "server/pgwire/server.h"
#include "server/pgwire/tls.h"
#include "server/port_reservation.h"
#include "server/users.h"

namespace {

void log(const std::string& msg) { rtsql::logLine(msg); }

bool isLoopback(const std::string& host) {
  if (host == "localhost" || host == "::1") return true;
  boost::system::error_code ec;
  auto addr = boost::asio::ip::make_address(host, ec);
  return !ec && addr.is_loopback();
}

// rtsqld --hash-password: reads one password line from stdin (without echo on
// a terminal) and prints its SCRAM-SHA-256 verifier, as a users-file line when
// a user name is given.
int hashPassword(const std::string& user) {
  const bool tty = ::isatty(STDIN_FILENO) != 0;
  termios saved{};
  if (tty && ::tcgetattr(STDIN_FILENO, &saved) == 0) {
    termios quiet = saved;
    quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet);
    std::cerr << "Password: " << std::flush;
  }
  std::string password;
  const bool got = static_cast<bool>(std::getline(std::cin, password));
  if (tty) {
    ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved);
    std::cerr << std::endl;
  }
  if (!password.empty() && password.back() == '\r') password.pop_back();
  if (!got || password.empty()) {
    std::cerr << "rtsqld: --hash-password reads a non-empty password from standard input"
              << std::endl;
    return 2;
  }
  const std::string verifier =
      rtsql::pgwire::formatScramVerifier(rtsql::pgwire::makeScramVerifier(password));
  std::cout << (user.empty() ? verifier : user + ":" + verifier) << std::endl;
  return 0;
}

std::atomic<bool> gStopRequested{false};

void onEarlyStop(int) { gStopRequested = true; }

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rtsqld: the rtsql streaming SQL server (PostgreSQL wire protocol)"};
  std::string host = "127.0.0.1";
  uint16_t port = 5433;
  std::string dataDir = "data";
  bool embedded = false;
  int embeddedPartitions = 1;
  int slots = 64;
  app.add_option("--host", host,
                 "address to listen on (other than loopback only with --users-file)")
      ->capture_default_str();
  app.add_option("--port", port, "port to listen on (0: any free port)")->capture_default_str();
  app.add_option("--data-dir", dataDir, "directory for the server's files")->capture_default_str();
  app.add_flag("--embedded-kafka", embedded,
               "start an in-process Kafka broker on loopback, named 'embedded' in SQL");
  bool localKafka = false;
  int localKafkaPort = 0;
  app.add_flag("--local-kafka", localKafka,
               "run a single-node Apache Kafka (a child process, its logs and port kept under "
               "--data-dir/kafka, so topics and offsets survive restarts), named 'local' in SQL");
  app.add_option("--local-kafka-port", localKafkaPort,
                 "client port of --local-kafka (default: the one recorded at its first start, "
                 "then a free one)")
      ->check(CLI::Range(1, 65535));
  app.add_option("--embedded-kafka-partitions", embeddedPartitions,
                 "partitions of topics created on the embedded broker")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  std::string cluster, clusterKafka, nodeName;
  app.add_option("--cluster", cluster,
                 "join the cluster of this name: its catalog lives in the Kafka of --kafka, "
                 "shared by every rtsqld started with the same name");
  app.add_option("--kafka", clusterKafka,
                 "the cluster's Kafka bootstrap servers (host:port,...; 'embedded': this "
                 "server's --embedded-kafka)");
  app.add_option("--node-name", nodeName,
                 "this server's name in its cluster, the same at every restart (default: the "
                 "host's name and --port); letters, digits, '.', '_' and '-'");
  int nodeTimeoutSeconds = 10;
  app.add_option("--node-timeout", nodeTimeoutSeconds,
                 "seconds a node of a cluster may be silent before the others take its flows")
      ->check(CLI::Range(6, 1800))
      ->capture_default_str();
  std::string advertiseAddress, clusterSecretFile;
  app.add_option("--advertise-address", advertiseAddress,
                 "host:port the other nodes of the cluster reach this node's PostgreSQL listener "
                 "at, to send it reads of the views it holds (default: --host, or the host's name "
                 "when --host is a wildcard, and the port listened on)");
  app.add_option("--cluster-secret-file", clusterSecretFile,
                 "a file whose first line is the cluster's secret, the same on every node: a node "
                 "proves it when it sends another a read of a view on its client's behalf "
                 "(needed with --users-file)")
      ->check(CLI::ExistingFile);
  bool clusterRepair = false;
  // On the command line only: in a --config file it would make every start
  // a repair.
  app.add_flag("--cluster-repair", clusterRepair,
               "write a tombstone for each damaged record of the --cluster's catalog topic "
               "(dropping those objects) and exit; see docs/operations.md")
      ->configurable(false);
  app.add_option("--slots", slots, "task slots: the most tasks all flows together may run")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  std::string tlsCert;
  std::string tlsKey;
  bool tlsRequired = false;
  std::string usersFile;
  size_t maxConnections = 1000;
  // 0: one per core, at most 4.
  size_t ioThreads = 0;
  size_t maxStatementBytes = 4 * 1024 * 1024;
  std::string hashUser;
  auto* tlsCertOpt = app.add_option("--tls-cert", tlsCert,
                                    "TLS certificate chain (PEM): clients may connect with TLS");
  auto* tlsKeyOpt = app.add_option("--tls-key", tlsKey, "private key of --tls-cert (PEM)");
  tlsCertOpt->needs(tlsKeyOpt);
  tlsKeyOpt->needs(tlsCertOpt);
  app.add_flag("--tls-required", tlsRequired, "refuse clients that do not use TLS")
      ->needs(tlsCertOpt);
  auto* usersFileOpt =
      app.add_option("--users-file", usersFile,
                     "users and passwords (name:password or name:SCRAM-SHA-256$...); "
                     "without it every local client is trusted")
          ->check(CLI::ExistingFile);
  std::vector<std::string> superusers;
  std::vector<std::string> filesDirs;
  int liveSlotsPerUser = 0;
  app.add_option("--superuser", superusers,
                 "a user who may manage users and name files on the server (repeatable); "
                 "the users file's first user always is one")
      ->needs(usersFileOpt)
      ->allow_extra_args(false);
  app.add_option("--files-dir", filesDirs,
                 "a directory whose files statements may read and write (repeatable); "
                 "without it only superusers may name server files")
      ->check(CLI::ExistingDirectory)
      ->allow_extra_args(false);
  std::vector<std::string> outboundAllow;
  app.add_option("--outbound-allow", outboundAllow,
                 "a destination statements may aim the server at (repeatable; host, address or "
                 "network/bits, each with an optional :port); without it only superusers may "
                 "name outbound URLs (schema registry, HTTP sink, Kinesis endpoint); with it "
                 "Kafka bootstrap lists must match too")
      ->allow_extra_args(false);
  app.add_option("--max-live-query-slots-per-user", liveSlotsPerUser,
                 "task slots one user's live queries may hold (superusers: no bound); "
                 "default half of --slots")
      ->check(CLI::Range(1, 100000));
  app.add_option("--max-connections", maxConnections, "most concurrent client connections")
      ->check(CLI::Range(size_t{1}, size_t{100000}))
      ->capture_default_str();
  app.add_option("--io-threads", ioThreads,
                 "threads that serve the PostgreSQL connections' I/O and prepared lookups; "
                 "0 (the default): one per core, at most 4")
      ->check(CLI::Range(size_t{0}, size_t{256}))
      ->capture_default_str();
  app.add_option("--max-statement-bytes", maxStatementBytes,
                 "largest statement (and protocol message) a client may send")
      ->check(CLI::Range(size_t{1024}, size_t{1} << 30))
      ->capture_default_str();
  auto* hashOpt = app.add_option("--hash-password", hashUser,
                                 "read a password from stdin, print its SCRAM-SHA-256 verifier "
                                 "(as a users-file line for USER if given) and exit")
                      ->expected(0, 1)
                      ->type_name("[USER]");
  int httpPort = -1;
  app.add_option("--http-port", httpPort,
                 "port of the HTTP endpoint (web console at /, /metrics, /flows, /healthz) on --host; "
                 "0: any free port; off unless given")
      ->check(CLI::Range(0, 65535));
  std::vector<std::string> httpAllowedHosts;
  app.add_option("--http-allowed-hosts", httpAllowedHosts,
                 "a name the HTTP endpoint answers for in the Host header besides address "
                 "literals, localhost and --host (repeatable; e.g. the name of a proxy in front)")
      ->allow_extra_args(false);
  int pythonCallTimeout = 0;
  app.add_option("--python-call-timeout", pythonCallTimeout,
                 "seconds one Python call (a function's or a processor's) may run before it is "
                 "interrupted and fails its statement or flow; 0: no limit")
      ->check(CLI::Range(0, 86400))
      ->capture_default_str();
  int shutdownTimeout = 120;
  app.add_option("--shutdown-timeout", shutdownTimeout,
                 "seconds the stop on SIGINT/SIGTERM may take before rtsqld exits with status 3 "
                 "(a call that cannot be interrupted holds a flow)")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  bool httpTls = false;
  app.add_flag("--http-tls", httpTls,
               "serve the HTTP endpoint over TLS (HTTPS only) with --tls-cert and --tls-key")
      ->needs(tlsCertOpt);
  app.set_version_flag("--version", "rtsqld " RTSQL_VERSION);
  // Every long option above may also come from a file of `name = value` lines
  // (the option's name without the dashes). The command line wins over the
  // file, and a name the server does not know is an error, so a misspelt key
  // fails the start instead of being ignored.
  hashOpt->configurable(false);
  auto* configOpt =
      app.set_config("--config", "",
                     "read options from FILE: `name = value` lines (long option names without "
                     "the dashes; `#` comments); options on the command line win")
          ->type_name("FILE");
  app.allow_config_extras(CLI::config_extras_mode::error);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ConfigError& e) {
    // The parser says only "INI was not able to parse NAME": read the file
    // again for the line, what is wrong with it and the option meant.
    const std::string path = configOpt->as<std::string>();
    std::vector<std::string> known;
    for (const CLI::Option* opt : app.get_options()) {
      for (const std::string& name : opt->get_lnames()) known.push_back(name);
    }
    const std::vector<std::string> commandLineOnly = {"config", "hash-password", "help",
                                                      "version"};
    std::ifstream file(path);
    const auto problem = rtsql::describeConfigProblem(file, known, commandLineOnly);
    std::cerr << "rtsqld: --config " << path << ": " << (problem ? *problem : e.what())
              << " (a name is a long option of rtsqld --help without its dashes; config, "
                 "cluster-repair, hash-password, help and version only on the command line)"
              << std::endl;
    return e.get_exit_code();
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  if (hashOpt->count() > 0) return hashPassword(hashUser);
  if (!isLoopback(host) && usersFile.empty()) {
    log(fmt::format("refusing to listen on {}: without --users-file every client is trusted, so "
                    "rtsqld listens only on loopback addresses (127.0.0.1, ::1); give it a users "
                    "file to listen elsewhere",
                    host));
    return 2;
  }
  std::signal(SIGPIPE, SIG_IGN);
  try {
    rtsql::net::OutboundPolicy::setProcess(rtsql::net::OutboundPolicy::parse(outboundAllow));
  } catch (const std::invalid_argument& e) {
    log(fmt::format("--outbound-allow {}", e.what()));
    return 2;
  }
  rtsql::setPythonCallTimeLimitMs(int64_t{pythonCallTimeout} * 1000);

  // Held until the listeners below bind them, so nothing started before them
  // (the embedded broker, Kafka clients, restored flows) is given these ports.
  rtsql::PortReservation pgPortHeld(host, port);
  rtsql::PortReservation httpPortHeld(host, static_cast<uint16_t>(httpPort > 0 ? httpPort : 0));
  try {
    // One store for both the protocol server and the engine: CREATE / ALTER /
    // DROP USER change what the next connection is checked against.
    std::shared_ptr<rtsql::UserStore> users;
    if (!usersFile.empty()) {
      users = std::make_shared<rtsql::UserStore>(rtsql::UserStore::loadFile(usersFile));
      log(fmt::format("password authentication (SCRAM-SHA-256) for {} users from {}",
                      users->size(), usersFile));
    }
    std::filesystem::create_directories(dataDir);

    std::unique_ptr<rtsql::EmbeddedKafka> broker;
    std::string bootstrap;
    if (embedded) {
      rtsql::EmbeddedKafkaOptions bo;
      bo.defaultPartitions = embeddedPartitions;
      broker = std::make_unique<rtsql::EmbeddedKafka>(bo);
      bootstrap = broker->bootstrap();
      log(fmt::format("embedded Kafka broker listening on {} ('kafka.bootstrap.servers' = "
                      "'embedded'); ephemeral: its topics live in memory and are lost at "
                      "shutdown (--local-kafka keeps them)",
                      bootstrap));
    }

    // Started before the catalog's flows, stopped after them (below).
    std::unique_ptr<rtsql::LocalKafka> local;
    if (localKafka) {
      rtsql::LocalKafkaOptions lo;
      lo.dataDir = dataDir;
      lo.port = localKafkaPort;
      lo.stopRequested = [] { return gStopRequested.load(); };
      lo.log = [](const std::string& line) { log(line); };
      log("local Kafka broker: starting");
      // While it starts, SIGINT and SIGTERM end its waits (the start then
      // fails) rather than leave a broker half started.
      std::signal(SIGINT, onEarlyStop);
      std::signal(SIGTERM, onEarlyStop);
      local = std::make_unique<rtsql::LocalKafka>(lo);
      std::signal(SIGINT, SIG_DFL);
      std::signal(SIGTERM, SIG_DFL);
      if (gStopRequested) {
        log("stopped during the start");
        return 0;  // `local` stops the broker
      }
      log(fmt::format("local Kafka broker listening on {} ('kafka.bootstrap.servers' = 'local'); "
                      "durable: topics and offsets in {}; started in {:.1f} s",
                      local->bootstrap(), local->directory(), local->startMillis() / 1000.0));
    }

    std::shared_ptr<rtsql::ClusterCatalog> clusterCatalog;
    // Set once the listener is bound (its port may be chosen then).
    auto advertised = std::make_shared<rtsql::AdvertisedAddress>();
    std::string clusterSecret;
    if (!cluster.empty() || !clusterKafka.empty()) {
      if (cluster.empty() || clusterKafka.empty()) {
        log("--cluster and --kafka go together: name the cluster and its Kafka");
        return 2;
      }
      rtsql::ClusterOptions co;
      co.name = cluster;
      co.bootstrap = clusterKafka == "embedded" ? bootstrap
                     : clusterKafka == "local" ? (local ? local->bootstrap() : std::string())
                                               : clusterKafka;
      if (co.bootstrap.empty()) {
        log(fmt::format("--kafka {0} needs --{0}-kafka", clusterKafka));
        return 2;
      }
      if (nodeName.empty()) {
        char hostName[256] = {0};
        ::gethostname(hostName, sizeof hostName - 1);
        nodeName = fmt::format("{}-{}", hostName, port);
      }
      // The name is the node's identity in the cluster's Kafka group.
      if (nodeName.size() > 200 || !rtsql::validKafkaTopicName(nodeName)) {
        log(fmt::format("--node-name \"{}\": a node's name is 1 to 200 letters, digits, '.', '_' "
                        "and '-'",
                        nodeName));
        return 2;
      }
      co.node = nodeName;
      co.nodeTimeoutMs = nodeTimeoutSeconds * 1000;
      if (!advertiseAddress.empty() && !rtsql::validNodeAddress(advertiseAddress)) {
        log(fmt::format("--advertise-address \"{}\": give host:port (a name, an IPv4 address or "
                        "an IPv6 address in brackets, and a port from 1 to 65535)",
                        advertiseAddress));
        return 2;
      }
      co.advertised = advertised;
      if (!clusterSecretFile.empty()) {
        std::ifstream in(clusterSecretFile);
        std::getline(in, co.secret);
        while (!co.secret.empty() && (co.secret.back() == '\r' || co.secret.back() == ' '))
          co.secret.pop_back();
        if (!in && !in.eof()) co.secret.clear();
        if (co.secret.empty()) {
          log(fmt::format("--cluster-secret-file {}: its first line is empty or cannot be read",
                          clusterSecretFile));
          return 2;
        }
        clusterSecret = co.secret;
      }
      if (clusterRepair) {
        const auto repaired = rtsql::ClusterCatalog::repair(co);
        for (const auto& d : repaired) {
          log(fmt::format("cluster catalog: wrote a tombstone for key {} (its record at offset {} "
                          "of {} is not a catalog entry: {}); create that object again",
                          rtsql::shownCatalogKey(d.key), d.offset,
                          rtsql::clusterCatalogTopic(co.name), d.why));
        }
        log(repaired.empty()
                ? std::string("cluster catalog: no damaged record, nothing to repair")
                : fmt::format("cluster catalog repaired (tombstones: {})", repaired.size()));
        return 0;
      }
      clusterCatalog = std::make_shared<rtsql::ClusterCatalog>(co);
      log(fmt::format("node \"{}\" of cluster \"{}\": catalog in topic {} on {}", co.node, co.name,
                      rtsql::clusterCatalogTopic(co.name), co.bootstrap));
    } else if (clusterRepair) {
      log("--cluster-repair repairs the catalog of a cluster: give --cluster and --kafka");
      return 2;
    } else if (!nodeName.empty()) {
      log("--node-name names a node of a cluster: give --cluster and --kafka too");
      return 2;
    }

    rtsql::DefaultConnectorProvider connectors(bootstrap, cluster);
    rtsql::EngineOptions eo;
    eo.dataDir = dataDir;
    eo.slots = slots;
    eo.embeddedBootstrap = bootstrap;
    eo.users = users;
    eo.superusers = superusers;
    eo.filesDirs = filesDirs;
    eo.maxLiveQuerySlotsPerUser = liveSlotsPerUser;
    eo.cluster = clusterCatalog;
    if (users) {
      for (const auto& name : superusers) {
        if (users->find(name) == nullptr) {
          log(fmt::format("--superuser {}: no such user in {} yet", name, usersFile));
        }
      }
    }
    // What statements may touch on this machine, so an operator sees it once.
    log(filesDirs.empty()
            ? std::string(users ? "server files: only superusers may name them"
                                : "server files: every session may name them (no users file)")
            : fmt::format("server files: only inside {}", fmt::join(filesDirs, ", ")));
    log(outboundAllow.empty()
            ? std::string("outbound destinations: only superusers may name them")
            : fmt::format("outbound destinations: only {}",
                          rtsql::net::OutboundPolicy::process().describe()));
    // What malloc holds free after a burst (a view loading) goes back to
    // the system (server/memory_trim.h).
    rtsql::MemoryTrimmer memoryTrimmer;
    rtsql::Engine engine(eo, connectors);
    // The catalog of the data directory comes back before the first client:
    // sources, sinks, tables, and flows, which the supervisor then resumes.
    engine.restore();

    boost::asio::io_context io;
    rtsql::PgServerOptions po;
    po.host = host;
    po.port = port;
    po.maxConnections = maxConnections;
    po.maxMessageBytes = maxStatementBytes;
    po.tlsCertFile = tlsCert;
    po.tlsKeyFile = tlsKey;
    po.tlsRequired = tlsRequired;
    po.users = users;
    // The connections' I/O, and the prepared lookups a connection answers
    // itself (server/prepared_lookup.cpp), run on --io-threads threads (one
    // per core, at most 4), each connection pinned to one
    // (server/pgwire/io_threads.h).
    po.ioThreads =
        ioThreads > 0 ? ioThreads : std::clamp(std::thread::hardware_concurrency(), 1U, 4U);
    if (users && !clusterSecret.empty()) {
      // The salt is the cluster's own: every node derives the same verifier.
      po.forwardVerifier =
          rtsql::pgwire::makeScramVerifier(clusterSecret, "rtsql cluster " + cluster);
    }
    rtsql::PgServer server(io, engine, po);
    server.start();
    pgPortHeld.release();
    if (clusterCatalog) {
      std::string address = advertiseAddress;
      if (address.empty()) {
        std::string h = host;
        if (h == "0.0.0.0" || h == "::" || h.empty()) {
          char hostName[256] = {0};
          ::gethostname(hostName, sizeof hostName - 1);
          h = hostName;
        }
        address = h.find(':') != std::string::npos ? fmt::format("[{}]:{}", h, server.port())
                                                   : fmt::format("{}:{}", h, server.port());
      }
      advertised->set(address);
      log(fmt::format("node advertises {} for reads of its views by the other nodes{}", address,
                      users && clusterSecret.empty()
                          ? "; without --cluster-secret-file no node can send it a read, nor "
                            "this node one to another"
                          : ""));
    }
    log(fmt::format("listening on {}:{} (PostgreSQL protocol{}); data directory {}", host,
                    server.port(),
                    tlsCert.empty() ? "" : (tlsRequired ? ", TLS required" : ", TLS available"),
                    dataDir));

    rtsql::http::EngineSource httpSource(engine, engine);
    std::unique_ptr<rtsql::http::HttpServer> http;
    if (httpPort >= 0) {
      rtsql::http::HttpServerOptions ho;
      ho.host = host;
      ho.port = static_cast<uint16_t>(httpPort);
      ho.allowedHosts = httpAllowedHosts;
      if (users) {
        ho.checkPassword = [users](std::string_view user, std::string_view password) {
          return users->checkPassword(user, password);
        };
        // ALTER and DROP USER replace the user's verifier: a cached check
        // of the old password then no longer holds.
        ho.credentialStamp = [users](std::string_view user) {
          return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(users->find(user)));
        };
      }
      if (httpTls) ho.tls = rtsql::pgwire::makeServerTlsContext(tlsCert, tlsKey);
      http = std::make_unique<rtsql::http::HttpServer>(io, httpSource, ho);
      http->start();
      httpPortHeld.release();
      log(
          fmt::format("HTTP{} endpoint on {}:{} (web console at /; /metrics, /flows, "
                      "/flows/<name>/progress, /healthz){}",
                      httpTls ? "S" : "", host, http->port(),
                      users ? "; Basic authentication with the users file (/healthz open)" : ""));
      if (users && !httpTls) {
        log("HTTP endpoint: Basic credentials cross the network in the clear; --http-tls serves "
            "it over TLS");
      }
    }

    boost::asio::signal_set signals(io, SIGINT, SIGTERM);
    signals.async_wait([&](const boost::system::error_code& ec, int sig) {
      if (ec) return;
      log(fmt::format("received {}, stopping flows", sig == SIGINT ? "SIGINT" : "SIGTERM"));
      // A statement or a flow waiting on a remote service ends now, and so
      // does a flow's start in progress.
      rtsql::net::stopAllOutbound();
      engine.beginShutdown();
      // The stop is bounded: a flow whose task cannot be stopped (a Python
      // call in C code that never returns) would hold it for ever.
      std::thread([shutdownTimeout] {
        std::this_thread::sleep_for(std::chrono::seconds(shutdownTimeout));
        log(fmt::format("stopping took longer than --shutdown-timeout ({} s): exiting without "
                        "waiting for the rest",
                        shutdownTimeout));
        std::_Exit(3);
      }).detach();
      server.stop();
      if (http) http->stop();
      io.stop();
    });
    // The listeners, the HTTP endpoint's connections and the signals; the
    // PostgreSQL connections run on the server's own threads, stopped here
    // so that none of them runs while the engine shuts down.
    io.run();
    server.stopIo();

    // The SQL box's statements (live queries) end before the engine they run on.
    http.reset();
    engine.shutdown();
    if (local) {
      log("local Kafka broker: stopping");
      local->stop();
    }
    log("stopped");
    return 0;
  } catch (const rtsql::SqlError& e) {
    log(e.hint().empty() ? fmt::format("fatal: {}", e.message())
                         : fmt::format("fatal: {} (hint: {})", e.message(), e.hint()));
    return 1;
  } catch (const std::exception& e) {
    log(fmt::format("fatal: {}", e.what()));
    return 1;
  }
}
