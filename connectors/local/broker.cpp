#include "connectors/local/broker.h"

#include <fcntl.h>
#include <librdkafka/rdkafka.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "common/error.h"

namespace rtsql {

namespace fs = std::filesystem;

namespace {

constexpr const char* kHost = "127.0.0.1";
constexpr int kBrokerPollMs = 100;

std::mutex& runningMutex() {
  static std::mutex m;
  return m;
}
std::string& runningBootstrapRef() {
  static std::string b;
  return b;
}

int64_t nowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

SqlError startError(const std::string& message, const std::string& hint = {}) {
  SqlError e(sqlstate::kObjectNotInPrerequisiteState,
             "cannot start the local Kafka broker: " + message);
  if (!hint.empty()) e.withHint(hint);
  return e;
}

std::string readFile(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void writeFile(const fs::path& p, const std::string& text) {
  const fs::path tmp = p.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
    if (!out) throw startError(fmt::format("cannot write {}", tmp.string()));
  }
  fs::rename(tmp, p);
}

// The last `lines` lines of a file ("" when it cannot be read).
std::string tail(const fs::path& p, size_t lines) {
  std::ifstream in(p);
  std::deque<std::string> last;
  for (std::string line; std::getline(in, line);) {
    last.push_back(line);
    if (last.size() > lines) last.pop_front();
  }
  std::string out;
  for (const auto& l : last) out += l + "\n";
  return out;
}

// A port nothing listens on now, on loopback.
int freePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw startError("no socket for a free port");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  if (port <= 0) throw startError("no free loopback port");
  return port;
}

// Whether `port` on loopback can be bound now (nothing listens there).
bool portFree(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

std::optional<int> readPort(const fs::path& p) {
  if (!fs::exists(p)) return std::nullopt;
  const std::string text = readFile(p);
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (end == text.c_str() || v <= 0 || v > 65535) {
    throw startError(fmt::format("{} does not hold a port number", p.string()),
                     "remove it to choose a new port");
  }
  return static_cast<int>(v);
}

// The executable `name` on PATH (or $JAVA_HOME/bin for java), "" if none.
std::string findProgram(const std::string& name) {
  if (name == "java") {
    if (const char* home = std::getenv("JAVA_HOME"); home && *home) {
      const fs::path p = fs::path(home) / "bin" / "java";
      if (::access(p.c_str(), X_OK) == 0) return p.string();
    }
  }
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) continue;
    const fs::path p = fs::path(dir) / name;
    if (::access(p.c_str(), X_OK) == 0) return p.string();
  }
  return {};
}

// Starts `argv` with its output appended to `outFile`, in a session of its
// own (a Ctrl-C meant for rtsqld does not reach it: rtsqld stops it after its
// flows). With `dieWithParent` it gets SIGTERM when rtsqld exits, however.
pid_t spawn(const std::vector<std::string>& argv, const fs::path& outFile, bool dieWithParent,
            const std::vector<std::string>& env = {}) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // The environment is built here: nothing that allocates runs in the child.
  std::vector<char*> envp;
  for (char** e = environ; *e != nullptr; ++e) envp.push_back(*e);
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const int out = ::open(outFile.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (out < 0) throw startError(fmt::format("cannot open {}", outFile.string()));
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(out);
    throw startError("fork failed");
  }
  if (pid == 0) {
    // Only async-signal-safe calls from here to exec.
    if (dieWithParent) {
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (::getppid() != parent) ::_exit(1);  // the parent died before the prctl
    }
    ::setsid();
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    const int in = ::open("/dev/null", O_RDONLY);
    if (in >= 0) ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(out, 2);
    ::execve(args[0], args.data(), envp.data());
    ::_exit(127);
  }
  ::close(out);
  return pid;
}

// Waits for child `pid` to exit: its status, or nullopt when `timeoutMs`
// passed or `stop` turned true first.
std::optional<int> waitChild(pid_t pid, int timeoutMs, const std::function<bool()>& stop) {
  const int64_t deadline = nowMs() + timeoutMs;
  for (;;) {
    int status = 0;
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return status;
    if (r < 0) return -1;  // not our child any more
    if (nowMs() >= deadline || (stop && stop())) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(kBrokerPollMs));
  }
}

std::string describeStatus(int status) {
  if (WIFEXITED(status)) return fmt::format("exit status {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return fmt::format("signal {}", WTERMSIG(status));
  return "an unknown status";
}

// A Kafka cluster id: 16 random bytes in unpadded URL-safe base64.
std::string randomClusterId() {
  static const char* kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::random_device rd;
  unsigned char bytes[16];
  for (auto& b : bytes) b = static_cast<unsigned char>(rd() & 0xff);
  std::string out;
  int bits = 0, acc = 0;
  for (unsigned char b : bytes) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += kAlphabet[(acc >> bits) & 0x3f];
    }
  }
  if (bits > 0) out += kAlphabet[(acc << (6 - bits)) & 0x3f];
  return out;
}

void silentProbeLog(const rd_kafka_t*, int, const char*, const char*) {}

// Whether a broker answers a metadata request at `bootstrap` within `ms`.
bool answers(const std::string& bootstrap, int ms) {
  char errstr[256];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set_log_cb(conf, silentProbeLog);
  if (rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap.c_str(), errstr, sizeof errstr) !=
      RD_KAFKA_CONF_OK) {
    rd_kafka_conf_destroy(conf);
    return false;
  }
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof errstr);
  if (!rk) {
    rd_kafka_conf_destroy(conf);
    return false;
  }
  const rd_kafka_metadata_t* md = nullptr;
  const bool ok = rd_kafka_metadata(rk, 0, nullptr, &md, ms) == RD_KAFKA_RESP_ERR_NO_ERROR &&
                  md != nullptr && md->broker_cnt > 0;
  if (md) rd_kafka_metadata_destroy(md);
  rd_kafka_destroy(rk);
  return ok;
}

// Whether process `pid` is a broker started on directory `dir`.
bool isOurBroker(pid_t pid, const std::string& dir) {
  std::string cmdline = readFile(fmt::format("/proc/{}/cmdline", pid));
  for (char& c : cmdline) {
    if (c == '\0') c = ' ';
  }
  return cmdline.find("kafka.Kafka") != std::string::npos &&
         cmdline.find(dir + "/server.properties") != std::string::npos;
}

// rtsqld's build tree puts the binary in build/server/, next to scripts/.
std::string findFetchScript() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  for (const fs::path& candidate :
       {exe.parent_path() / ".." / ".." / "scripts" / "kafka.sh",
        exe.parent_path() / ".." / "share" / "rtsql" / "scripts" / "kafka.sh"}) {
    if (fs::exists(candidate, ec)) return fs::weakly_canonical(candidate, ec).string();
  }
  return {};
}

}  // namespace

LocalKafka::LocalKafka(LocalKafkaOptions options) : options_(std::move(options)) {
  const int64_t t0 = nowMs();
  dir_ = fs::absolute(fs::path(options_.dataDir) / "kafka").lexically_normal().string();
  fs::create_directories(fs::path(dir_) / "data");
  // One rtsqld per data directory: a second would stop the first's broker.
  // The lock is the open file's, so it goes with a killed rtsqld.
  lockFd_ = ::open((fs::path(dir_) / "lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lockFd_ < 0 || ::flock(lockFd_, LOCK_EX | LOCK_NB) != 0) {
    if (lockFd_ >= 0) ::close(lockFd_);
    lockFd_ = -1;
    throw startError(fmt::format("another rtsqld runs the broker of {}", dir_),
                     "stop it, or give this one another --data-dir");
  }
  try {
    ensureJars();
    stopOrphan();
    port_ = choosePort();
    bootstrap_ = fmt::format("{}:{}", kHost, port_);
    writeConfig();
    formatStorage();
    launch();
    waitUntilAnswering();
  } catch (...) {
    stop();
    ::close(lockFd_);
    lockFd_ = -1;
    throw;
  }
  startMillis_ = nowMs() - t0;
  std::lock_guard lock(runningMutex());
  runningBootstrapRef() = bootstrap_;
}

LocalKafka::~LocalKafka() {
  stop();
  if (lockFd_ >= 0) ::close(lockFd_);
}

std::string LocalKafka::runningBootstrap() {
  std::lock_guard lock(runningMutex());
  return runningBootstrapRef();
}

bool LocalKafka::ensureTopics(const std::string& bootstrap, const std::vector<std::string>& topics,
                              int timeoutMs) {
  if (bootstrap.empty() || bootstrap != runningBootstrap()) return false;
  if (topics.empty()) return true;
  char errstr[256];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set_log_cb(conf, silentProbeLog);
  rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap.c_str(), errstr, sizeof errstr);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof errstr);
  if (!rk) {
    rd_kafka_conf_destroy(conf);
    return true;
  }
  std::vector<rd_kafka_NewTopic_t*> newTopics;
  for (const std::string& t : topics) {
    if (rd_kafka_NewTopic_t* nt = rd_kafka_NewTopic_new(t.c_str(), 1, 1, errstr, sizeof errstr)) {
      newTopics.push_back(nt);
    }
  }
  rd_kafka_queue_t* queue = rd_kafka_queue_new(rk);
  rd_kafka_AdminOptions_t* options = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS);
  rd_kafka_AdminOptions_set_request_timeout(options, timeoutMs, errstr, sizeof errstr);
  rd_kafka_AdminOptions_set_operation_timeout(options, timeoutMs, errstr, sizeof errstr);
  rd_kafka_CreateTopics(rk, newTopics.data(), newTopics.size(), options, queue);
  // One result event for the request: a topic that exists already is an
  // error in it that needs no handling.
  if (rd_kafka_event_t* ev = rd_kafka_queue_poll(queue, timeoutMs + 1000)) rd_kafka_event_destroy(ev);
  rd_kafka_AdminOptions_destroy(options);
  rd_kafka_queue_destroy(queue);
  rd_kafka_NewTopic_destroy_array(newTopics.data(), newTopics.size());
  // The controller has the topics now, but the broker's metadata may learn
  // of them a moment later, and the caller's lookup (which creates nothing)
  // would find them missing meanwhile: wait until the broker lists them,
  // within the same bound.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
  for (const std::string& t : topics) {
    rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk, t.c_str(), nullptr);
    if (!rkt) continue;
    for (int ask = 0; ask < 600; ++ask) {
      const struct rd_kafka_metadata* md = nullptr;
      bool listed = false;
      if (rd_kafka_metadata(rk, 0, rkt, &md, 1000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
        listed = md->topic_cnt > 0 && md->topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR &&
                 md->topics[0].partition_cnt > 0;
        rd_kafka_metadata_destroy(md);
      }
      if (listed || std::chrono::steady_clock::now() >= deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    rd_kafka_topic_destroy(rkt);
  }
  rd_kafka_destroy(rk);
  return true;
}

std::string LocalKafka::jarsDir() const {
  if (const char* home = std::getenv("RTSQL_KAFKA_HOME"); home && *home) {
    return (fs::path(home) / "jars").string();
  }
  const char* home = std::getenv("HOME");
  return (fs::path(home && *home ? home : "/root") / ".cache" / "rtsql" /
          ("kafka-" + options_.version) / "jars")
      .string();
}

void LocalKafka::ensureJars() {
  if (findProgram("java").empty()) {
    throw startError("no Java runtime (java is not on PATH, nor in $JAVA_HOME/bin)",
                     "install a JRE 17 or later (Debian: apt-get install default-jre-headless), "
                     "or use --embedded-kafka");
  }
  const fs::path jars = jarsDir();
  if (fs::exists(jars / ".complete")) return;
  const std::string script = findFetchScript();
  if (script.empty()) {
    throw startError(fmt::format("the Apache Kafka {} jars are not in {}", options_.version,
                                 jars.string()),
                     "fetch them with scripts/kafka.sh fetch from a clone of rtsql (needs Maven), "
                     "or set RTSQL_KAFKA_HOME to a directory whose jars/ holds them");
  }
  options_.log(fmt::format("local Kafka broker: fetching the Apache Kafka {} jars into {} (once; "
                           "output in {}/fetch.log)",
                           options_.version, jars.string(), dir_));
  const fs::path out = fs::path(dir_) / "fetch.log";
  const pid_t pid = spawn({findProgram("bash"), script, "fetch"}, out, true,
                          {"RTSQL_KAFKA_VERSION=" + options_.version});
  const std::optional<int> status = waitChild(pid, options_.fetchTimeoutMs, options_.stopRequested);
  if (!status) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    throw startError(options_.stopRequested() ? "stopped while fetching the jars"
                                              : "fetching the jars took too long");
  }
  if (*status != 0 || !fs::exists(jars / ".complete")) {
    throw startError(fmt::format("fetching the Apache Kafka {} jars failed ({}):\n{}",
                                 options_.version, describeStatus(*status), tail(out, 20)),
                     "scripts/kafka.sh fetch needs Maven (apt-get install maven) and access to "
                     "Maven Central");
  }
}

void LocalKafka::stopOrphan() {
  const fs::path pidFile = fs::path(dir_) / "broker.pid";
  if (!fs::exists(pidFile)) return;
  const pid_t pid = static_cast<pid_t>(std::atol(readFile(pidFile).c_str()));
  if (pid > 1 && ::kill(pid, 0) == 0 && isOurBroker(pid, dir_)) {
    // Left by an rtsqld that was killed: its broker may still be shutting
    // down (SIGTERM from PR_SET_PDEATHSIG), or run on if it was started
    // another way. It has the logs and the port this start needs.
    options_.log(fmt::format("local Kafka broker: stopping the broker (pid {}) a previous rtsqld "
                             "left running",
                             pid));
    ::kill(pid, SIGTERM);
    const int64_t deadline = nowMs() + options_.stopTimeoutMs;
    while (::kill(pid, 0) == 0 && isOurBroker(pid, dir_) && nowMs() < deadline &&
           !options_.stopRequested()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(kBrokerPollMs));
    }
    if (::kill(pid, 0) == 0 && isOurBroker(pid, dir_)) {
      ::kill(pid, SIGKILL);
      for (int i = 0; i < 50 && ::kill(pid, 0) == 0 && isOurBroker(pid, dir_); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(kBrokerPollMs));
      }
    }
  }
  fs::remove(pidFile);
}

int LocalKafka::choosePort() {
  const fs::path portFile = fs::path(dir_) / "port";
  const fs::path controllerFile = fs::path(dir_) / "controller.port";
  std::optional<int> recorded = readPort(portFile);
  std::optional<int> controller = readPort(controllerFile);
  int port = options_.port > 0 ? options_.port : recorded.value_or(0);
  if (port == 0) port = freePort();
  if (!controller || *controller == port) {
    do {
      controller = freePort();
    } while (*controller == port);
  }
  // The old broker's sockets may linger a moment after it exited.
  const int64_t deadline = nowMs() + 10'000;
  while (!(portFree(port) && portFree(*controller))) {
    if (nowMs() >= deadline || options_.stopRequested()) {
      throw startError(fmt::format("port {} or {} on {} is in use", port, *controller, kHost),
                       fmt::format("stop what listens there, or remove {} to choose new ports",
                                   portFile.string()));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(kBrokerPollMs));
  }
  if (recorded != port) writeFile(portFile, std::to_string(port) + "\n");
  writeFile(controllerFile, std::to_string(*controller) + "\n");
  controllerPort_ = *controller;
  return port;
}

void LocalKafka::writeConfig() {
  const std::string data = (fs::path(dir_) / "data").string();
  writeFile(fs::path(dir_) / "server.properties",
            fmt::format(R"(# Written by rtsqld --local-kafka at every start; edits are lost.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@{0}:{2}
listeners=PLAINTEXT://{0}:{1},CONTROLLER://{0}:{2}
advertised.listeners=PLAINTEXT://{0}:{1}
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
log.dirs={3}
num.partitions=1
default.replication.factor=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
auto.create.topics.enable=true
group.initial.rebalance.delay.ms=0
)",
                        kHost, port_, controllerPort_, data));
  writeFile(fs::path(dir_) / "log4j2.properties",
            fmt::format(R"(status = warn
appender.file.type = RollingFile
appender.file.name = FILE
appender.file.fileName = {0}/broker.log
appender.file.filePattern = {0}/broker.log.%i
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
appender.file.policies.type = Policies
appender.file.policies.size.type = SizeBasedTriggeringPolicy
appender.file.policies.size.size = 10MB
appender.file.strategy.type = DefaultRolloverStrategy
appender.file.strategy.max = 3
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = FILE
)",
                        dir_));
}

std::vector<std::string> LocalKafka::javaCommand(const std::string& mainClass) const {
  return {findProgram("java"),
          "-Xms64m",
          "-Xmx512m",
          "-XX:+UseG1GC",
          "-Djava.awt.headless=true",
          "-Dlog4j2.configurationFile=file:" + dir_ + "/log4j2.properties",
          "-cp",
          jarsDir() + "/*",
          mainClass};
}

void LocalKafka::formatStorage() {
  const fs::path data = fs::path(dir_) / "data";
  if (fs::exists(data / "meta.properties")) return;  // formatted at an earlier start
  const fs::path out = fs::path(dir_) / "format.log";
  const std::string id = randomClusterId();
  for (const bool standalone : {true, false}) {
    std::vector<std::string> argv = javaCommand("kafka.tools.StorageTool");
    for (const char* a : {"format", "-t"}) argv.push_back(a);
    argv.push_back(id);
    argv.push_back("-c");
    argv.push_back(dir_ + "/server.properties");
    // Older 4.x releases refuse --standalone with static voters.
    if (standalone) argv.push_back("--standalone");
    const pid_t pid = spawn(argv, out, true);
    const std::optional<int> status =
        waitChild(pid, options_.startTimeoutMs, options_.stopRequested);
    if (!status) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
      throw startError("formatting the broker's storage did not finish");
    }
    if (*status == 0) return;
    if (!standalone) {
      throw startError(fmt::format("formatting the broker's storage in {} failed ({}):\n{}",
                                   data.string(), describeStatus(*status), tail(out, 20)));
    }
  }
}

void LocalKafka::launch() {
  std::vector<std::string> argv = javaCommand("kafka.Kafka");
  argv.push_back(dir_ + "/server.properties");
  pid_ = spawn(argv, fs::path(dir_) / "broker.out", true);
  writeFile(fs::path(dir_) / "broker.pid", std::to_string(pid_) + "\n");
}

void LocalKafka::waitUntilAnswering() {
  const int64_t deadline = nowMs() + options_.startTimeoutMs;
  for (;;) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      throw startError(fmt::format("the broker exited during its start ({}):\n{}",
                                   describeStatus(status), logTail()));
    }
    if (answers(bootstrap_, 1000)) return;
    if (options_.stopRequested()) throw startError("stopped during the broker's start");
    if (nowMs() >= deadline) {
      throw startError(fmt::format("the broker did not answer on {} within {} s:\n{}", bootstrap_,
                                   options_.startTimeoutMs / 1000, logTail()));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(kBrokerPollMs));
  }
}

std::string LocalKafka::logTail() const {
  return tail(fs::path(dir_) / "broker.out", 10) + tail(fs::path(dir_) / "broker.log", 20);
}

void LocalKafka::stop() {
  {
    std::lock_guard lock(runningMutex());
    if (runningBootstrapRef() == bootstrap_) runningBootstrapRef().clear();
  }
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  // The stop is not cut short by a shutdown request: it is the shutdown.
  std::optional<int> status = waitChild(pid_, options_.stopTimeoutMs, nullptr);
  if (!status) {
    options_.log(fmt::format("local Kafka broker: no exit {} s after SIGTERM; killing it",
                             options_.stopTimeoutMs / 1000));
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  std::error_code ec;
  fs::remove(fs::path(dir_) / "broker.pid", ec);
  pid_ = -1;
}

}  // namespace rtsql
