#include "server/transaction.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "common/error.h"
#include "common/schema.h"

namespace rtsql {

namespace {

// Walks a statement's words, PostgreSQL's grammar for them written out by hand.
class Words {
 public:
  explicit Words(const ast::BlockStatement& stmt) : stmt_(stmt) {}

  bool atEnd() const { return i_ >= stmt_.words.size(); }
  // The next word is the keyword `kw` (not a quoted name): taken.
  bool take(std::string_view kw) {
    if (atEnd()) return false;
    const ast::BlockWord& w = stmt_.words[i_];
    if (w.quoted || w.number || !iequals(w.text, kw)) return false;
    ++i_;
    return true;
  }
  void expect(std::string_view kw) {
    if (!take(kw)) throw syntaxError(fmt::format("expected {}", kw));
  }
  // A name: any word but a number; unquoted ones fold to lower case.
  std::pair<std::string, size_t> name(std::string_view what) {
    if (atEnd() || stmt_.words[i_].number || stmt_.words[i_].text == ",") {
      throw syntaxError(fmt::format("expected the {}'s name", what));
    }
    const ast::BlockWord& w = stmt_.words[i_++];
    return {w.quoted ? w.text : toLower(w.text), w.pos};
  }
  // A row count: a number, perhaps signed.
  bool number(int64_t& out) {
    if (atEnd() || !stmt_.words[i_].number) return false;
    const std::string& t = stmt_.words[i_].text;
    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), out);
    if (ec != std::errc() || p != t.data() + t.size()) {
      throw SqlError(sqlstate::kNumericOutOfRange, fmt::format("row count {} is out of range", t),
                     stmt_.words[i_].pos);
    }
    ++i_;
    return true;
  }
  size_t pos() const { return atEnd() ? SqlError::npos : stmt_.words[i_].pos; }
  void done() {
    if (!atEnd()) throw syntaxError({});
  }
  SqlError syntaxError(const std::string& hint) const {
    std::string msg = atEnd() ? "syntax error at end of input"
                              : fmt::format("syntax error at or near \"{}\"", stmt_.words[i_].text);
    SqlError e(sqlstate::kSyntaxError, msg, atEnd() ? stmt_.pos + stmt_.text.size() : pos());
    if (!hint.empty()) e.withHint(hint);
    return e;
  }
  SqlError unsupported(const std::string& what, size_t at, const std::string& hint) const {
    return SqlError(sqlstate::kFeatureNotSupported, what, at, hint);
  }

 private:
  const ast::BlockStatement& stmt_;
  size_t i_ = 1;  // past the statement's keyword
};

// BEGIN / START TRANSACTION / SET TRANSACTION modes: an isolation level
// (every level is accepted: a block's reads are of live streams, and its
// DDL applies all at once at COMMIT, which serializes it), READ ONLY / READ
// WRITE, [NOT] DEFERRABLE; commas between them are optional.
void readModes(Words& w, BlockCommand& cmd) {
  bool any = false;
  while (!w.atEnd()) {
    if (any) w.take(",");
    if (w.take("ISOLATION")) {
      w.expect("LEVEL");
      if (w.take("SERIALIZABLE")) {
      } else if (w.take("REPEATABLE")) {
        w.expect("READ");
      } else if (w.take("READ")) {
        if (!w.take("COMMITTED") && !w.take("UNCOMMITTED"))
          throw w.syntaxError("expected COMMITTED or UNCOMMITTED");
      } else {
        throw w.syntaxError("expected SERIALIZABLE, REPEATABLE READ, READ COMMITTED or READ UNCOMMITTED");
      }
    } else if (w.take("READ")) {
      if (w.take("ONLY")) {
        cmd.readOnly = true;
      } else if (w.take("WRITE")) {
        cmd.readOnly = false;
      } else {
        throw w.syntaxError("expected ONLY or WRITE");
      }
    } else if (w.take("NOT")) {
      w.expect("DEFERRABLE");
    } else if (w.take("DEFERRABLE")) {
    } else {
      throw w.syntaxError("expected ISOLATION LEVEL, READ ONLY, READ WRITE or DEFERRABLE");
    }
    any = true;
  }
}

// FETCH / MOVE's direction and count, then [FROM | IN] the cursor.
void readFetch(Words& w, BlockCommand& cmd) {
  const size_t at = w.pos();
  auto backward = [&] {
    return w.unsupported("cursors only go forward", at,
                         "use FETCH [FORWARD] n or FETCH ALL; a cursor over a stream has no way "
                         "back");
  };
  int64_t n = 0;
  if (w.take("NEXT")) {
    cmd.count = 1;
  } else if (w.take("ALL")) {
    cmd.count = BlockCommand::kAll;
  } else if (w.take("FORWARD")) {
    if (w.take("ALL")) {
      cmd.count = BlockCommand::kAll;
    } else if (w.number(n)) {
      if (n < 0) throw backward();
      cmd.count = n;
    }
  } else if (w.number(n)) {
    if (n < 0) throw backward();
    cmd.count = n;
  } else if (w.take("PRIOR") || w.take("FIRST") || w.take("LAST") || w.take("ABSOLUTE") ||
             w.take("RELATIVE") || w.take("BACKWARD")) {
    throw backward();
  }
  if (!w.take("FROM")) w.take("IN");
  auto [name, pos] = w.name("cursor");
  cmd.name = name;
  cmd.namePos = pos;
  w.done();
}

}  // namespace

BlockCommand readBlockCommand(const ast::BlockStatement& stmt) {
  using K = BlockCommand::Kind;
  BlockCommand cmd;
  Words w(stmt);
  const std::string head = stmt.words.front().text;
  auto workOrTransaction = [&] {
    if (!w.take("WORK")) w.take("TRANSACTION");
  };
  if (head == "BEGIN") {
    cmd.kind = K::Begin;
    workOrTransaction();
    readModes(w, cmd);
  } else if (head == "START") {
    cmd.kind = K::Begin;
    w.expect("TRANSACTION");
    readModes(w, cmd);
  } else if (head == "COMMIT" || head == "END") {
    cmd.kind = K::Commit;
    workOrTransaction();
    w.done();
  } else if (head == "ROLLBACK" || head == "ABORT") {
    cmd.kind = K::Rollback;
    workOrTransaction();
    if (head == "ROLLBACK" && w.take("TO")) {
      cmd.kind = K::RollbackTo;
      w.take("SAVEPOINT");
      auto [name, pos] = w.name("savepoint");
      cmd.name = name;
      cmd.namePos = pos;
    }
    w.done();
  } else if (head == "SAVEPOINT" || head == "RELEASE") {
    cmd.kind = head == "SAVEPOINT" ? K::Savepoint : K::Release;
    if (cmd.kind == K::Release) w.take("SAVEPOINT");
    auto [name, pos] = w.name("savepoint");
    cmd.name = name;
    cmd.namePos = pos;
    w.done();
  } else if (head == "SET") {
    cmd.kind = K::SetTransaction;
    if (w.take("SESSION")) {
      w.expect("CHARACTERISTICS");
      w.expect("AS");
    }
    if (!w.take("TRANSACTION")) throw w.syntaxError("expected = or TO");
    readModes(w, cmd);
  } else if (head == "FETCH" || head == "MOVE") {
    cmd.kind = head == "FETCH" ? K::Fetch : K::Move;
    readFetch(w, cmd);
  } else if (head == "CLOSE") {
    cmd.kind = K::Close;
    if (w.take("ALL")) {
      cmd.all = true;
    } else {
      auto [name, pos] = w.name("cursor");
      cmd.name = name;
      cmd.namePos = pos;
    }
    w.done();
  } else if (head == "DECLARE") {
    cmd.kind = K::Declare;
    auto [name, pos] = w.name("cursor");
    cmd.name = name;
    cmd.namePos = pos;
    cmd.binary = w.take("BINARY");
    if (!w.take("ASENSITIVE")) w.take("INSENSITIVE");
    if (w.take("NO")) {
      w.expect("SCROLL");
    } else if (w.take("SCROLL")) {
      throw w.unsupported("SCROLL cursors are not supported", pos,
                          "declare it NO SCROLL: a cursor over a stream only goes forward");
    }
    w.expect("CURSOR");
    if (w.take("WITH")) {
      w.expect("HOLD");
      cmd.hold = true;
    } else if (w.take("WITHOUT")) {
      w.expect("HOLD");
    }
    w.done();
  } else {
    throw InternalError("unknown block statement " + head);
  }
  return cmd;
}

char TransactionBlock::status() const {
  switch (state()) {
    case State::Idle: return 'I';
    case State::InBlock: return 'T';
    case State::Failed: return 'E';
  }
  return 'I';
}

bool TransactionBlock::begin() {
  if (active()) return false;
  state_ = State::InBlock;
  savepoints_.clear();
  readOnly_ = false;
  return true;
}

TransactionBlock::Ended TransactionBlock::commit() {
  const State was = state();
  state_ = State::Idle;
  savepoints_.clear();
  if (was == State::Idle) return Ended::NoBlock;
  return was == State::Failed ? Ended::RolledBack : Ended::Committed;
}

TransactionBlock::Ended TransactionBlock::rollback() {
  const State was = state();
  state_ = State::Idle;
  savepoints_.clear();
  return was == State::Idle ? Ended::NoBlock : Ended::RolledBack;
}

void TransactionBlock::fail() {
  if (active()) state_ = State::Failed;
}

void TransactionBlock::admit(bool endsBlock, size_t pos) const {
  if (state() != State::Failed || endsBlock) return;
  throw SqlError(sqlstate::kInFailedSqlTransaction,
                 "current transaction is aborted, commands ignored until end of transaction block",
                 pos, "ROLLBACK ends the block (or ROLLBACK TO a savepoint made before the error)");
}

void TransactionBlock::savepoint(const std::string& name, size_t mark, size_t pos) {
  if (!active()) {
    throw SqlError(sqlstate::kNoActiveSqlTransaction,
                   "SAVEPOINT can only be used in transaction blocks", pos);
  }
  savepoints_.push_back({name, mark});
}

size_t TransactionBlock::find(const std::string& name, size_t pos) const {
  if (!active()) {
    throw SqlError(sqlstate::kNoActiveSqlTransaction,
                   "savepoints can only be used in transaction blocks", pos);
  }
  // The latest of that name, as in PostgreSQL.
  for (size_t i = savepoints_.size(); i-- > 0;) {
    if (savepoints_[i].name == name) return i;
  }
  throw SqlError(sqlstate::kInvalidSavepoint, fmt::format("savepoint \"{}\" does not exist", name),
                 pos);
}

void TransactionBlock::release(const std::string& name, size_t pos) {
  const size_t i = find(name, pos);
  savepoints_.resize(i);
}

size_t TransactionBlock::rollbackTo(const std::string& name, size_t pos) {
  const size_t i = find(name, pos);
  savepoints_.resize(i + 1);
  state_ = State::InBlock;
  return savepoints_[i].mark;
}

}  // namespace rtsql
