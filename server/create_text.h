// The CREATE statement of a source, sink, table or flow as it is now: SHOW
// CREATE prints it, and ALTER writes it to the catalog store in place of the
// statement that made the object (a restart, and the other nodes of a
// cluster, run it as they run any CREATE). It is rendered from the parsed
// statement with the options given: the header without IF NOT EXISTS, the
// columns and watermark, TRIGGER and CHECKPOINT INTERVAL, then WITH (...),
// so that running it and rendering again gives the same text.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "parser/ast.h"

namespace rtsql {

using OptionList = std::vector<std::pair<std::string, std::string>>;

// A name as a statement can spell it: bare when it is a plain lower- or
// upper-case word that is not a reserved keyword, else double-quoted.
std::string sqlName(const std::string& name);
// 'text' with its quotes and backslashes doubled: a literal that reads back as text.
std::string sqlString(const std::string& text);
// WITH ('key' = 'value', ...), or "" for none.
std::string withClause(const OptionList& options);
OptionList optionList(const std::vector<ast::Option>& options);

// `watermark`: the WATERMARK's expression in place of the one written (ALTER
// SOURCE's 'watermark.delay').
std::string createSourceText(const ast::CreateSource& stmt, const OptionList& options,
                             const std::optional<std::string>& watermark = std::nullopt);
std::string createSinkText(const ast::CreateSink& stmt, const OptionList& options);
std::string createTableText(const ast::CreateTable& stmt, const OptionList& options);
std::string createFlowText(const ast::CreateFlow& stmt,
                           const std::optional<std::string>& checkpointInterval,
                           const OptionList& options);

// The one statement of `sql` (a catalog definition), of kind `kind`; SqlError
// XX000 otherwise.
ast::StatementPtr parseDefinition(const std::string& sql, ast::StatementKind kind);

}  // namespace rtsql
