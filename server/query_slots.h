// The task slots a query takes, and what a query short of them answers.
// Bounded queries (server/bounded_query.h) and live queries
// (server/live_query.h) run on the flows' engine, one thread per task, so
// they take slots from the pool that bounds those threads for the node's
// flows and queries together (executor/slot_pool.h): a task per relation
// they read (a Kafka source: per partition), and shuffle.partitions tasks per
// stage after a shuffle (a join, GROUP BY, DISTINCT).
//
// A query short of slots is refused at once, not made to wait: flows hold
// their slots for their whole life, so a wait would mostly end at
// statement_timeout, or never without one.
#pragma once

#include <optional>
#include <string_view>

#include "common/error.h"
#include "executor/slot_pool.h"
#include "planner/physical_plan.h"

namespace rtsql {

struct QuerySlots {
  int total = 0;
  int reading = 0;     // tasks that read the relations
  int stages = 0;      // stages after a shuffle
  int partitions = 0;  // tasks of each of them (shuffle.partitions)
};

QuerySlots querySlotsOf(const PhysicalPlan& plan);

// The shuffle.partitions with which a query that needs `need` fits in
// `free` slots: nullopt when it fits as it is, or when no number does (its
// relations' tasks alone need more).
std::optional<int> partitionsThatFit(const QuerySlots& need, int free);

// 53000 for `what` ("a bounded query") needing `need` when `pool` has fewer
// free: how many it needs and how many are free, its tasks in the DETAIL,
// and in the hint the shuffle.partitions that fits them now (the answer is
// the same with any), when one does.
SqlError querySlotsError(std::string_view what, const QuerySlots& need, const SlotPool& pool);

}  // namespace rtsql
