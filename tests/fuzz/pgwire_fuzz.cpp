// Fuzz target: the bytes a client sends on a PostgreSQL connection, through
// every decoder of the wire layer. The input is a wire stream: a startup packet
// (length, body), then typed messages (type byte, length, body), framed the way
// the connection frames them. Each message goes to its decoder and then to what
// the connection does with the result without running a statement: Parse
// counts and checks parameters, Bind turns each value into a SQL literal of its
// declared type and substitutes them, Describe/Execute/Close decode their
// targets, SASL messages drive a SCRAM exchange. Errors are turned into
// ErrorResponse messages with their position, as the connection sends them.
// Only SqlError may come out of any of it.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "common/sql_text.h"
#include "server/pgwire/auth.h"
#include "server/pgwire/codec.h"
#include "server/pgwire/extended.h"

using namespace rtsql;
using namespace rtsql::pgwire;

namespace {

uint32_t bigEndian32(std::string_view s, size_t at) {
  return (uint32_t(uint8_t(s[at])) << 24) | (uint32_t(uint8_t(s[at + 1])) << 16) |
         (uint32_t(uint8_t(s[at + 2])) << 8) | uint32_t(uint8_t(s[at + 3]));
}

// The result columns a Bind's result formats are checked against.
const std::vector<ResultColumn>& sampleColumns() {
  static const std::vector<ResultColumn> columns = {
      {"b", pgtype::kBool},   {"bytes", pgtype::kBytea}, {"big", pgtype::kInt8},
      {"n", pgtype::kInt4},   {"s", pgtype::kText},      {"j", pgtype::kJson},
      {"d", pgtype::kFloat8}, {"ts", pgtype::kTimestamp}, {"iv", pgtype::kInterval}};
  return columns;
}

const ScramVerifier& verifier() {
  // Made once: deriving a verifier runs thousands of PBKDF2 iterations.
  static const ScramVerifier v = makeScramVerifier("secret", "0123456789abcdef", 4096);
  return v;
}

struct WireSession {
  std::map<std::string, PreparedStatement> statements;
  std::optional<ScramExchange> scram;
  std::string out;

  void message(char type, std::string_view body) {
    std::string sql;
    try {
      switch (type) {
        case 'Q': {
          sql = decodeQuery(body);
          splitStatements(sql);
          deallocateTarget(sql);
          returnsRows(sql);
          break;
        }
        case 'P': {
          ParseMessage m = decodeParse(body);
          sql = m.query;
          splitStatements(m.query);
          PreparedStatement stmt;
          stmt.paramTypes = std::move(m.paramTypes);
          const size_t count = countParameters(m.query);
          if (stmt.paramTypes.size() < count) stmt.paramTypes.resize(count, extype::kUnspecified);
          stmt.returnsRows = returnsRows(m.query);
          stmt.sql = std::move(m.query);
          statements[m.statement] = std::move(stmt);
          break;
        }
        case 'B': {
          BindMessage m = decodeBind(body);
          auto it = statements.find(m.statement);
          if (it == statements.end()) break;
          const PreparedStatement& stmt = it->second;
          sql = stmt.sql;
          const size_t n = stmt.paramTypes.size();
          if (m.params.size() != n) break;
          if (m.paramFormats.size() > 1 && m.paramFormats.size() != n) break;
          std::vector<std::string> literals;
          for (size_t i = 0; i < n; ++i) {
            const int16_t format = m.paramFormats.empty()       ? kTextFormat
                                   : m.paramFormats.size() == 1 ? m.paramFormats[0]
                                                                : m.paramFormats[i];
            literals.push_back(parameterLiteral(m.params[i], stmt.paramTypes[i], format));
          }
          BoundStatement bound = substituteParameters(stmt.sql, literals);
          for (size_t at = 0; at <= bound.text.size(); at += 7) bound.originalOffset(at);
          resultFormatsFor(m.resultFormats, sampleColumns());
          break;
        }
        case 'D':
        case 'C':
          decodeTarget(body);
          break;
        case 'E':
          decodeExecute(body);
          break;
        case 'p': {
          // The first is a SASLInitialResponse, the next a SASLResponse.
          if (!scram) {
            SaslInitialResponse initial = decodeSaslInitialResponse(body);
            scram.emplace(verifier(), true, "serverNonce");
            scram->offerChannelBinding("end-point");
            scram->serverFirst(initial.data, initial.mechanism);
          } else {
            scram->serverFinal(body);
          }
          break;
        }
        default:
          break;
      }
    } catch (const SqlError& e) {
      appendErrorResponse(out, e, sql);
    }
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  // The startup packet: a length that counts itself, then the body.
  if (in.size() < 4) return 0;
  const uint32_t startupLength = bigEndian32(in, 0);
  if (startupLength < 8 || startupLength > in.size()) return 0;
  WireSession session;
  try {
    decodeStartupPacket(in.substr(4, startupLength - 4));
  } catch (const SqlError& e) {
    appendErrorResponse(session.out, e);
  }
  // Then typed messages, until the bytes run out.
  size_t at = startupLength;
  while (in.size() - at >= 5) {
    const char type = in[at];
    const uint32_t length = bigEndian32(in, at + 1);
    if (length < 4 || length - 4 > in.size() - at - 5) break;
    session.message(type, in.substr(at + 5, length - 4));
    at += 5 + (length - 4);
  }
  return 0;
}
