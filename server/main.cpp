// rtsqld: the rtsql server. Parses the command line, starts the embedded Kafka
// broker when asked, the engine and the PostgreSQL-protocol listener, and stops
// every flow cleanly on SIGINT/SIGTERM.
#include <CLI/CLI.hpp>
#include <boost/asio.hpp>
#include <csignal>
#include <filesystem>
#include <iostream>

#include "common/clock.h"
#include "common/json.h"
#include "connectors/embedded/broker.h"
#include "connectors/provider.h"
#include "server/engine.h"
#include "server/pgwire/server.h"

namespace {

void log(const std::string& msg) {
  std::cerr << rtsql::formatTimestamp(rtsql::nowMicros(), true) << " rtsqld: " << msg << std::endl;
}

bool isLoopback(const std::string& host) {
  if (host == "localhost" || host == "::1") return true;
  boost::system::error_code ec;
  auto addr = boost::asio::ip::make_address(host, ec);
  return !ec && addr.is_loopback();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rtsqld: the rtsql streaming SQL server (PostgreSQL wire protocol)"};
  std::string host = "127.0.0.1";
  uint16_t port = 5433;
  std::string dataDir = "data";
  bool embedded = false;
  int embeddedPartitions = 1;
  int slots = 64;
  app.add_option("--host", host, "address to listen on (loopback only for now)")->capture_default_str();
  app.add_option("--port", port, "port to listen on (0: any free port)")->capture_default_str();
  app.add_option("--data-dir", dataDir, "directory for the server's files")->capture_default_str();
  app.add_flag("--embedded-kafka", embedded,
               "start an in-process Kafka broker on loopback, named 'embedded' in SQL");
  app.add_option("--embedded-kafka-partitions", embeddedPartitions,
                 "partitions of topics created on the embedded broker")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--slots", slots, "task slots: the most tasks all flows together may run")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.set_version_flag("--version", "rtsqld " RTSQL_VERSION);
  CLI11_PARSE(app, argc, argv);

  if (!isLoopback(host)) {
    log(fmt::format("refusing to listen on {}: rtsqld has no password authentication yet, so it "
                    "only listens on loopback addresses (127.0.0.1, ::1)",
                    host));
    return 2;
  }
  std::signal(SIGPIPE, SIG_IGN);

  try {
    std::filesystem::create_directories(dataDir);

    std::unique_ptr<rtsql::EmbeddedKafka> broker;
    std::string bootstrap;
    if (embedded) {
      rtsql::EmbeddedKafkaOptions bo;
      bo.defaultPartitions = embeddedPartitions;
      broker = std::make_unique<rtsql::EmbeddedKafka>(bo);
      bootstrap = broker->bootstrap();
      log(fmt::format("embedded Kafka broker listening on {} ('kafka.bootstrap.servers' = 'embedded')",
                      bootstrap));
    }

    rtsql::DefaultConnectorProvider connectors(bootstrap);
    rtsql::EngineOptions eo;
    eo.dataDir = dataDir;
    eo.slots = slots;
    eo.embeddedBootstrap = bootstrap;
    rtsql::Engine engine(eo, connectors);

    boost::asio::io_context io;
    rtsql::PgServerOptions po;
    po.host = host;
    po.port = port;
    rtsql::PgServer server(io, engine, po);
    server.start();
    log(fmt::format("listening on {}:{} (PostgreSQL protocol); data directory {}", host, server.port(),
                    dataDir));

    boost::asio::signal_set signals(io, SIGINT, SIGTERM);
    signals.async_wait([&](const boost::system::error_code& ec, int sig) {
      if (ec) return;
      log(fmt::format("received {}, stopping flows", sig == SIGINT ? "SIGINT" : "SIGTERM"));
      server.stop();
      io.stop();
    });
    io.run();

    engine.shutdown();
    log("stopped");
    return 0;
  } catch (const rtsql::SqlError& e) {
    log(fmt::format("fatal: {}", e.message()));
    return 1;
  } catch (const std::exception& e) {
    log(fmt::format("fatal: {}", e.what()));
    return 1;
  }
}
