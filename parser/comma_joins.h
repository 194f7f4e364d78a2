// FROM a, b, c WHERE ... as the inner joins it means. PostgreSQL's tools
// write joins as comma lists: psql's \d name reads a relation's indexes with
// `FROM pg_class c, pg_class c2, pg_index i LEFT JOIN pg_constraint con ON
// ... WHERE c.oid = '16384' AND c.oid = i.indrelid AND i.indexrelid =
// c2.oid`. For inner joins a condition means the same in ON as in WHERE, and
// the planner finds a join's keys in ON, so the WHERE's conjuncts move into
// the ON of the first join that has every relation they name. The relations
// are joined in the order written, except that a relation with no equality to
// those joined before it waits for the first later one that has one (inner
// joins commute; only `*`'s column order would show it, so a list with an
// unqualified `*` keeps the written order). A conjunct with a subquery stays
// in WHERE, where subqueries are planned; one that names a column without
// its relation's name goes to the last join, which has them all.
#pragma once

#include <vector>

#include "parser/ast.h"

namespace rtsql::ast {

// The FROM of `relations` (at least one), as written after FROM, with the
// conjuncts of `where` (may be null; what stays is left in it) moved into the
// joins' ON. A join that gets no condition stays a CROSS join.
// `keepOrder`: join in the written order (a select list with `*`).
TableRefPtr joinCommaRelations(std::vector<TableRefPtr> relations, ExprPtr& where,
                               bool keepOrder);

}  // namespace rtsql::ast
