// Fuzz target: .proto text as a schema registry gives it (proto_text.h),
// read by libprotoc's parser and built with the well-known types, then every
// message's plan made as a protobuf source's would be: the text is the
// registry's, so a hostile one must be an error, never a crash. The input's
// first line, when it starts with "//import ", is a second file the rest
// imports as "dep.proto".
#include <google/protobuf/descriptor.h>

#include <string>
#include <string_view>

#include "common/error.h"
#include "connectors/format/proto_text.h"
#include "connectors/format/protobuf_schema.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rtsql;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<format::ProtoImport> imports;
  constexpr std::string_view kImport = "//import ";
  if (text.substr(0, kImport.size()) == kImport) {
    const size_t eol = text.find('\n');
    const std::string_view dep =
        text.substr(kImport.size(), eol == std::string_view::npos ? eol : eol - kImport.size());
    imports.push_back({"dep.proto", std::string(dep)});
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
  }
  format::ProtoFiles files;
  std::string error;
  if (!format::buildProtoFiles(text, "fuzz.proto", imports, files, error)) return 0;
  for (int i = 0; i < files.file->message_type_count(); ++i) {
    const google::protobuf::Descriptor* d = format::messageAtIndexes(*files.file, {i});
    try {
      auto schema = format::ProtobufSchema::ofMessage(files.pool, *d, 0);
      format::protobufSourceColumns(*schema, Schema{}, {}, 0);
    } catch (const SqlError&) {
      // A map, group or recursive message: refused, as a source refuses it.
    }
  }
  return 0;
}
