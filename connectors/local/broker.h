// The local Kafka broker behind `rtsqld --local-kafka` and
// `'kafka.bootstrap.servers' = 'local'`: a real single-node Apache Kafka
// (KRaft, broker and controller in one JVM, loopback only) that rtsqld runs as
// a child process, with everything it keeps under the data directory
// (DATA/kafka), so that topics, committed offsets and the port survive a
// restart of rtsqld, kill -9 included. The embedded broker (embedded/broker.h)
// is the ephemeral one: in memory, a new port every start.
//
// The broker's jars are those scripts/kafka.sh fetches from Maven Central, in
// the same cache (~/.cache/rtsql/kafka-<version>/jars, or $RTSQL_KAFKA_HOME),
// so nothing is fetched twice; when the cache is empty, start() runs
// `scripts/kafka.sh fetch` if it can find it next to rtsqld's build tree.
//
// DATA/kafka holds:
//   port             the client port, chosen free at the first start (or
//                    given), then the same at every start; the controller
//                    listens on the port recorded in controller.port
//   server.properties, log4j2.properties   written at every start
//   data/            the broker's log dirs (formatted at the first start)
//   broker.pid       the running broker's pid
//   broker.log, broker.out   the broker's own log and console output
//
// The child gets SIGTERM when rtsqld dies (PR_SET_PDEATHSIG), so a killed
// rtsqld leaves no broker running for long; one still shutting down, or left
// by any other way, is found by broker.pid at the next start and stopped
// (SIGTERM, a bounded wait, then SIGKILL) before the new one starts on the
// same port and logs. Every wait (fetch, start, readiness, stop) is bounded
// and ends early when stopRequested() turns true.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace rtsql {

struct LocalKafkaOptions {
  std::string dataDir;           // rtsqld's data directory; the broker's lives in dataDir/kafka
  int port = 0;                  // 0: the recorded port, or a free one at the first start
  std::string version = "4.1.1";  // the Apache Kafka release (scripts/kafka.sh's default)
  int startTimeoutMs = 120'000;  // the JVM's start and the broker's first answer
  int stopTimeoutMs = 30'000;    // SIGTERM to exit, before SIGKILL
  int fetchTimeoutMs = 600'000;  // scripts/kafka.sh fetch, when the jar cache is empty
  // Polled during every wait: true ends it (startup throws, stop kills).
  std::function<bool()> stopRequested = [] { return false; };
  // Progress lines for the server's log.
  std::function<void(const std::string&)> log = [](const std::string&) {};
};

class LocalKafka {
 public:
  // Starts the broker and waits until it answers; throws SqlError with what
  // to do (no Java, no jars and no way to fetch them, a port in use, the
  // broker's own last log lines when it exits or does not answer in time).
  explicit LocalKafka(LocalKafkaOptions options);
  // stop().
  ~LocalKafka();
  LocalKafka(const LocalKafka&) = delete;
  LocalKafka& operator=(const LocalKafka&) = delete;

  // "127.0.0.1:PORT".
  const std::string& bootstrap() const { return bootstrap_; }
  int port() const { return port_; }
  const std::string& directory() const { return dir_; }
  // Milliseconds the start took, the JVM's start and the first answer.
  int64_t startMillis() const { return startMillis_; }

  // SIGTERM, up to stopTimeoutMs for the broker to exit, then SIGKILL.
  // Idempotent.
  void stop();

  // The bootstrap of the running local broker, or "" when none runs: what
  // 'kafka.bootstrap.servers' = 'local' means.
  static std::string runningBootstrap();
  // When `bootstrap` is the running local broker's, creates those of `topics`
  // it lacks (one partition each, as the embedded broker makes them), so that
  // a script written for the embedded broker runs on it unchanged, then
  // until the broker's metadata lists them (a lookup that creates nothing
  // follows); each wait at most `timeoutMs`. Returns whether `bootstrap` is
  // the local broker's. A topic it could not create is left to the caller's
  // lookup to report.
  static bool ensureTopics(const std::string& bootstrap, const std::vector<std::string>& topics,
                           int timeoutMs = 30'000);

 private:
  std::string jarsDir() const;
  void ensureJars();
  void stopOrphan();
  int choosePort();
  void writeConfig();
  void formatStorage();
  void launch();
  void waitUntilAnswering();
  std::string logTail() const;
  std::vector<std::string> javaCommand(const std::string& mainClass) const;

  LocalKafkaOptions options_;
  std::string dir_;
  std::string bootstrap_;
  int port_ = 0;
  int controllerPort_ = 0;
  pid_t pid_ = -1;
  int lockFd_ = -1;  // DATA/kafka/lock, flock'ed while this rtsqld runs the broker
  int64_t startMillis_ = 0;
};

}  // namespace rtsql
