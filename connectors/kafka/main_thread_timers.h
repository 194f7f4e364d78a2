// Keeps librdkafka's main thread from spinning before each of its timers.
//
// Every librdkafka client (and the handle that owns the embedded broker) has
// a main thread, `rdk:main`, that sleeps until its next timer (a one-second
// housekeeping tick at least) and then runs it. librdkafka 2.0.2 (Debian
// 12's, and every release until the 2024 fix) rounds that sleep down to
// whole milliseconds and then waits with no timeout at all until the timer
// is due: the thread wakes about a millisecond early and spins through clock
// reads and queue locks for the rest of it (confluentinc/librdkafka#4684,
// fixed upstream by rounding up). That is 0.08 - 0.09% of a core per client
// with nothing to do, over a quarter of the quick start's idle cost on the
// embedded broker (docs/benchmarks.md, "Idle and trickle cost").
//
// The cure here is the thread's timer slack (prctl PR_SET_TIMERSLACK): the
// kernel may end the main thread's timed waits up to kMainThreadSlackNanos
// late, and unless another timer interrupt comes first it ends them at the
// end of the slack, past the millisecond the sleep was cut short by: the
// timer is due when the thread wakes, and a wait ended early leaves only the
// rest of that millisecond to spin (strace: 40 - 50 us between two waits
// where it was 0.8 ms). Only timed waits are
// affected: a request, an answer or a record wakes the thread as promptly as
// before. The timers of the main thread are housekeeping (the one-second
// tick, metadata refreshes, retry backoffs of a hundred milliseconds and
// more) that a few milliseconds do not change. The client's other threads
// (one per broker, which carry the records and hold the linger) keep the
// slack of the thread that made the client, whoever creates them.
#pragma once

#include <librdkafka/rdkafka.h>

namespace rtsql::kafka {

// How late the kernel may end a timed wait of librdkafka's main thread.
inline constexpr long kMainThreadSlackNanos = 2'000'000;

// Registers, on `conf`, an interceptor that gives the main thread of the
// client made from it that slack (and the client's other threads the slack of
// the thread calling this). Call it on the configuration rd_kafka_new() takes:
// rd_kafka_conf_dup() does not copy it. Calling it twice on one
// configuration is harmless.
void calmMainThreadTimers(rd_kafka_conf_t* conf);

}  // namespace rtsql::kafka
