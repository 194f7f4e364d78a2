// A session's statements as the parser reads them (session_text.h).
#include "server/session_text.h"

#include "parser/parser.h"
#include "parser/string_literals.h"

namespace rtsql {

bool keepsBackslashes(const Options& settings) {
  const OptionEntry* e = settings.find(kEscapedStringLiteralsSetting);
  return e != nullptr && e->value == "on";
}

std::vector<ast::StatementPtr> parseSessionStatements(const Options& settings,
                                                      std::string_view sql) {
  if (!keepsBackslashes(settings)) return parseStatements(sql);
  return parseStatements(keepBackslashesAsWritten(sql));
}

void moveToWrittenText(SqlError& err, bool kept, std::string_view sql) {
  if (kept && err.hasPosition()) err.setPosition(writtenPosition(sql, err.position()));
}

}  // namespace rtsql
