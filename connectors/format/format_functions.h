// The SQL functions over the record formats: from_avro and to_avro,
// from_protobuf and to_protobuf, as Spark defines them (its spark-avro and
// spark-protobuf packages), over the code the avro and protobuf sources and
// sinks use. They live with the formats, not in common/functions/, and are
// added to the function table by installFormatFunctions().
#pragma once

#include <string>

namespace rtsql::format {

// Adds the functions to the function table once per process, before any
// statement is bound; each call sets the directory a descriptor file of
// from_protobuf and to_protobuf is read beneath: the server's data directory.
void installFormatFunctions(const std::string& dataDirectory);

}  // namespace rtsql::format
