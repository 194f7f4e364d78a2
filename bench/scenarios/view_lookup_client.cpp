// Point lookups for bench/scenarios/view_lookup.sh: prepared statements over
// the PostgreSQL protocol (libpq's PQprepare / PQexecPrepared) against one
// server, rtsqld's materialized view or PostgreSQL's table of the same rows,
// at a target rate, while the caller updates the rows.
//
//   rtsql_view_lookup_client --port P --sql SQL --keys N [--host H] [--user U]
//       [--dbname D] [--rate R] [--clients C] [--seconds S]
//
// Each of --clients threads opens its own connection, prepares SQL (one `$1`
// parameter: the key `k<i>`, i uniform over --keys) once, and runs it paced to
// rate/clients lookups a second (a thread behind its schedule sends the next
// lookup at once, and never more than it owes). A lookup's latency is from
// sending its Bind/Execute to having its result. Prints one JSON line:
// lookups, lookups/s, P50/P99/P999 in microseconds, misses (no row), errors.
// Every wait is bounded: libpq's connect_timeout, and --seconds for the run.
#include <libpq-fe.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Args {
  std::string host = "127.0.0.1";
  std::string port;
  std::string user = "rtsql";
  std::string dbname = "rtsql";
  std::string sql;
  long keys = 0;
  double rate = 10000;
  int clients = 4;
  double seconds = 20;
};

struct Result {
  std::vector<int64_t> latencyNs;
  long misses = 0;
  long errors = 0;
  std::string error;  // the first one
};

[[noreturn]] void usage() {
  std::fprintf(stderr,
               "usage: rtsql_view_lookup_client --port P --sql SQL --keys N [--host H] [--user U]"
               " [--dbname D] [--rate R] [--clients C] [--seconds S]\n");
  std::exit(2);
}

Args parseArgs(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) usage();
    const char* v = argv[++i];
    if (flag == "--host") a.host = v;
    else if (flag == "--port") a.port = v;
    else if (flag == "--user") a.user = v;
    else if (flag == "--dbname") a.dbname = v;
    else if (flag == "--sql") a.sql = v;
    else if (flag == "--keys") a.keys = std::atol(v);
    else if (flag == "--rate") a.rate = std::atof(v);
    else if (flag == "--clients") a.clients = std::atoi(v);
    else if (flag == "--seconds") a.seconds = std::atof(v);
    else usage();
  }
  if (a.port.empty() || a.sql.empty() || a.keys <= 0 || a.clients <= 0 || a.seconds <= 0) usage();
  return a;
}

void lookups(const Args& args, int index, Clock::time_point start, Result& out) {
  const std::string conninfo = "host=" + args.host + " port=" + args.port + " user=" + args.user +
                               " dbname=" + args.dbname + " connect_timeout=30 gssencmode=disable";
  PGconn* conn = PQconnectdb(conninfo.c_str());
  if (PQstatus(conn) != CONNECTION_OK) {
    out.errors = 1;
    out.error = PQerrorMessage(conn);
    PQfinish(conn);
    return;
  }
  PGresult* prepared = PQprepare(conn, "lookup", args.sql.c_str(), 1, nullptr);
  if (PQresultStatus(prepared) != PGRES_COMMAND_OK) {
    out.errors = 1;
    out.error = PQresultErrorMessage(prepared);
    PQclear(prepared);
    PQfinish(conn);
    return;
  }
  PQclear(prepared);

  std::mt19937_64 rng(static_cast<uint64_t>(index) + 1);
  std::uniform_int_distribution<long> pick(0, args.keys - 1);
  const double perClient = args.rate / args.clients;
  const auto interval = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(perClient > 0 ? 1.0 / perClient : 0.0));
  const auto end = start + std::chrono::duration_cast<Clock::duration>(
                               std::chrono::duration<double>(args.seconds));
  out.latencyNs.reserve(static_cast<size_t>(perClient * args.seconds * 1.1) + 16);
  Clock::time_point due = start;
  char key[32];
  for (;;) {
    const auto now = Clock::now();
    if (now >= end) break;
    if (interval.count() > 0 && now < due) {
      std::this_thread::sleep_for(std::min(due - now, end - now));
      continue;
    }
    due += interval;
    std::snprintf(key, sizeof key, "k%ld", pick(rng));
    const char* values[1] = {key};
    const auto t0 = Clock::now();
    PGresult* r = PQexecPrepared(conn, "lookup", 1, values, nullptr, nullptr, 0);
    const auto t1 = Clock::now();
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
      if (out.errors++ == 0) out.error = PQresultErrorMessage(r);
      PQclear(r);
      if (PQstatus(conn) != CONNECTION_OK) break;
      continue;
    }
    if (PQntuples(r) == 0) ++out.misses;
    PQclear(r);
    out.latencyNs.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
  }
  PQfinish(conn);
}

long percentileUs(const std::vector<int64_t>& sorted, double p) {
  if (sorted.empty()) return -1;
  const size_t i = std::min(sorted.size() - 1, static_cast<size_t>(sorted.size() * p));
  return static_cast<long>(sorted[i] / 1000);
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parseArgs(argc, argv);
  std::vector<Result> results(static_cast<size_t>(args.clients));
  std::vector<std::thread> threads;
  const auto start = Clock::now() + std::chrono::milliseconds(200);
  for (int i = 0; i < args.clients; ++i) {
    threads.emplace_back(
        [&, i] { lookups(args, i, start, results[static_cast<size_t>(i)]); });
  }
  for (auto& t : threads) t.join();
  std::vector<int64_t> all;
  long misses = 0;
  long errors = 0;
  std::string firstError;
  for (const Result& r : results) {
    all.insert(all.end(), r.latencyNs.begin(), r.latencyNs.end());
    misses += r.misses;
    errors += r.errors;
    if (firstError.empty()) firstError = r.error;
  }
  std::sort(all.begin(), all.end());
  if (!firstError.empty()) std::fprintf(stderr, "view_lookup_client: %s", firstError.c_str());
  std::printf(
      "{\"lookups\": %zu, \"lookups_per_s\": %.1f, \"p50_us\": %ld, \"p99_us\": %ld, "
      "\"p999_us\": %ld, \"misses\": %ld, \"errors\": %ld}\n",
      all.size(), static_cast<double>(all.size()) / args.seconds, percentileUs(all, 0.50),
      percentileUs(all, 0.99), percentileUs(all, 0.999), misses, errors);
  return 0;
}
