// Binary encodings of Values for operator state and the shuffle.
//
// Key encoding is order-preserving: comparing two encoded keys bytewise gives
// the same order as comparing the values (NULL first, then by type tag, numbers
// by value, strings bytewise), so a range scan over encoded keys is a range over
// values. It is used for state keys, e.g. `encodeKey(windowEnd) + encodeKey(groupKey...)`
// lets an operator expire windows with one scan up to the watermark.
//
// Row encoding is compact and self-describing enough to decode given the
// column types; it is used for state values.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/value.h"

namespace rtsql {

void encodeKey(std::string& out, const Value& v);
// Decodes one key-encoded value, consuming its bytes from `in`. `type` tells an
// INT from a BIGINT (they share an encoding so that they compare equal); other
// types are told by the encoding itself. Throws InternalError on corrupt input.
Value decodeKey(std::string_view& in, const DataType& type);
// A big-endian, sign-flipped 64-bit integer: the usual time prefix of a key.
void encodeKeyInt(std::string& out, int64_t v);
int64_t decodeKeyInt(std::string_view& in);  // consumes 8 bytes

void encodeValue(std::string& out, const Value& v);
// Decodes one value of type `type`, consuming its bytes from `in`.
// Throws InternalError on truncated input.
Value decodeValue(std::string_view& in, const DataType& type);

void encodeRow(std::string& out, const Row& row);
Row decodeRow(std::string_view in, const std::vector<DataTypePtr>& types);

}  // namespace rtsql
