// PostgreSQL's system information functions (pg_catalog.cpp), registered in
// the function table by common/expr.cpp after the others: version() there is
// PostgreSQL's, which drivers parse.
#pragma once

#include <string>

#include "common/functions/internal.h"

namespace rtsql::expr_internal {

void registerPgCatalogFunctions(FunctionTable& t);

// version()'s text: "PostgreSQL 15.0 on x86_64-pc-linux-gnu, rtsql 0.1.0".
std::string pgVersionString();

}  // namespace rtsql::expr_internal
