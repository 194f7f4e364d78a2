#include "server/handler_error.h"

namespace rtsql {

SqlError handlerError(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const SqlError& err) {
    return err;
  } catch (const std::exception& err) {
    // InternalError is a std::exception too: a broken invariant and a
    // library's exception are reported alike, with their own words.
    return SqlError(sqlstate::kInternalError, err.what());
  } catch (...) {
    return SqlError(sqlstate::kInternalError, kUnknownInternalError);
  }
}

}  // namespace rtsql
