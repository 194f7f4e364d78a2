#include "connectors/kafka/main_thread_timers.h"

#include <sys/prctl.h>

#include <cstdint>

namespace rtsql::kafka {

namespace {

constexpr const char* kInterceptorName = "rtsql-main-thread-timers";

// Runs on each new thread of the client, before it does anything else. The
// opaque carries the slack of the thread that configured the client.
rd_kafka_resp_err_t onThreadStart(rd_kafka_t*, rd_kafka_thread_type_t type, const char*,
                                  void* opaque) {
  // Threads inherit the slack of the thread that creates them, and the main
  // thread creates the threads of brokers it learns of later: each non-main
  // thread is set back explicitly.
  const auto slack = type == RD_KAFKA_THREAD_MAIN
                         ? kMainThreadSlackNanos
                         : static_cast<long>(reinterpret_cast<uintptr_t>(opaque));
  prctl(PR_SET_TIMERSLACK, static_cast<unsigned long>(slack), 0, 0, 0);
  return RD_KAFKA_RESP_ERR_NO_ERROR;
}

rd_kafka_resp_err_t onNew(rd_kafka_t* rk, const rd_kafka_conf_t*, void* opaque, char*, size_t) {
  return rd_kafka_interceptor_add_on_thread_start(rk, kInterceptorName, onThreadStart, opaque);
}

}  // namespace

void calmMainThreadTimers(rd_kafka_conf_t* conf) {
  const int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
  // 50 µs, the kernel's default, when it cannot be read.
  const uintptr_t callerSlack = slack > 0 ? static_cast<uintptr_t>(slack) : 50'000;
  // A second registration under the same name is refused (RD_KAFKA_RESP_ERR__CONFLICT):
  // the first stays, which is all that is wanted.
  rd_kafka_conf_interceptor_add_on_new(conf, kInterceptorName, onNew,
                                       reinterpret_cast<void*>(callerSlack));
}

}  // namespace rtsql::kafka
