// Bounds on a schema's text, checked before any parser sees it. A schema's
// text comes from a user's option ('avro.schema'), from a schema registry
// (an Avro schema's JSON, a .proto file and its imports) or, through a
// registry, from whoever registered it: it is hostile input. The parsers that
// read it (libprotoc's, libavro's JSON reader, the schema walkers) recurse
// once or more per level of nesting, so a text nested 20,000 deep would
// overflow the stack and take the server down; a text of gigabytes would make
// them allocate as much. A text past these bounds is refused with the reason,
// which the caller turns into its own error (a statement's, or a record's
// decode error under the source's 'on.error').
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace rtsql::format {

// The longest schema text read: a hundred times the largest schema seen in
// practice, and well below a registry answer's own cap.
inline constexpr size_t kMaxSchemaTextBytes = size_t{4} << 20;

// The deepest nesting of brackets read: for Avro's JSON, three levels per
// nested record ({ "fields": [ { ...), so more than the 64 levels of types an
// Avro schema may nest (avro_schema.h); for .proto text, a level per nested
// message, enum, option block or option value.
inline constexpr int kMaxSchemaTextDepth = 256;

enum class SchemaTextSyntax {
  Json,   // an Avro schema (or any JSON): strings in "", with \ escapes
  Proto,  // .proto text: strings in "" or '', with \ escapes; // and /* */ comments
};

// Empty when `text` is within the bounds above; else why it is not, as a
// phrase ("the text nests more than 256 levels deep, ...").
// Brackets are counted outside strings and comments, each of ( [ { < as a level,
// so that a text which does not parse at all is still bounded.
std::string schemaTextProblem(std::string_view text, SchemaTextSyntax syntax);

}  // namespace rtsql::format
