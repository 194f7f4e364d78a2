// Subqueries in a bounded query's select list, evaluated row by row:
// `(SELECT d.adbin FROM pg_attrdef d WHERE d.adrelid = a.attrelid)` and
// `ARRAY(SELECT b.rolname FROM pg_auth_members m JOIN pg_roles b ON ...
// WHERE m.member = r.oid)`, which PostgreSQL's tools send (psql's \d name,
// \du). The subquery may name the enclosing query's columns (it is
// correlated); every relation it reads is finite (a static table, a
// materialized view's snapshot, the catalog as PostgreSQL shows it), so it is
// evaluated for each outer row by nested loops over those relations' rows,
// read once when the query is planned. That is sound for any condition
// (equalities, `<>`, `= ANY(...)`, conditions on the outer row alone), where
// a rewrite into a join needs equalities. Its cost is the product of the
// inner relations' sizes per outer row, bounded: more than
// kMaxSubqueryRows combinations for one outer row is refused with 54000.
//
// What the subquery may hold: one SELECT (no UNION, GROUP BY, HAVING or
// DISTINCT) over named finite relations, subqueries in FROM, inner, LEFT and
// CROSS joins, and the set-returning functions unnest(array),
// generate_series(start, stop[, step]) and pg_options_to_table(options);
// WHERE; ORDER BY, LIMIT and OFFSET;
// either plain items or only the aggregates count, collect_list/array_agg,
// string_agg, min and max (a query without GROUP BY, one row). A scalar
// subquery gives NULL without a row, its value with one, and PostgreSQL's
// 21000 with more.
#pragma once

#include <cstdint>

#include "planner/binder.h"
#include "planner/planner.h"

namespace rtsql::planner_detail {

// The most row combinations a subquery may visit for one outer row.
inline constexpr int64_t kMaxSubqueryRows = 1'000'000;

// Binds the scalar subquery `e` (ExprKind::Subquery) of a select list over
// `outer`, the enclosing query's scope: an expression on the enclosing
// query's rows. ctx.boundedRelation must be set. Throws SqlError for a
// subquery it cannot evaluate (0A000 with what to write instead).
ExprPtr bindRowSubquery(const ast::Expr& e, const Scope& outer, const PlanContext& ctx,
                        const UserFunctions& functions);

}  // namespace rtsql::planner_detail
