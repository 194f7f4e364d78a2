// Hexadecimal text of bytes, both ways: BINARY values as text (X'0a1b'
// literals, hex(), unhex(), to_binary()), digests, bytea parameters of the
// wire protocol, and %XX escapes in URLs.
#pragma once

#include <string>
#include <string_view>

namespace rtsql {

// Lower-case hexadecimal of raw bytes ("0a1b...").
std::string lowerHex(std::string_view bytes);

// The value of one hexadecimal digit (either case), or -1 for any other
// character.
int hexDigitValue(char c);

// The bytes that hexadecimal `text` stands for, two digits a byte; an odd
// length reads as if a 0 led it. False, with `out` unspecified, when a
// character is not a hex digit.
bool decodeHex(std::string_view text, std::string& out);

}  // namespace rtsql
