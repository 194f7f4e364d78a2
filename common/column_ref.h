// Plain column references seen from outside the expression tree: the planner
// follows a column through projections (a unique key, changelog.h) by asking
// which input column an output expression reads unchanged.
#pragma once

namespace rtsql {

class Expr;

// The input column `e` reads unchanged when it is a plain column reference,
// else -1.
int columnRefIndex(const Expr& e);

}  // namespace rtsql
