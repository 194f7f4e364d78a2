// Transaction blocks as PostgreSQL's clients see them: the state machine of
// one session's block (idle, in a block, failed), its savepoints, and the
// reading of a block or cursor statement's words (parser/ast.h BlockStatement)
// into what it asks. What a block does with the catalog is the engine's
// (server/block_statements.cpp); cursors are server/cursor.h's.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "parser/ast.h"

namespace rtsql {

// PostgreSQL's SQLSTATEs of transaction blocks: a statement a block refuses
// (25001), one outside a block that needs one (25P01), one in a failed block
// (25P02), an unknown savepoint (3B001).
namespace sqlstate {
inline constexpr const char* kActiveSqlTransaction = "25001";
inline constexpr const char* kNoActiveSqlTransaction = "25P01";
inline constexpr const char* kInFailedSqlTransaction = "25P02";
inline constexpr const char* kInvalidSavepoint = "3B001";
}  // namespace sqlstate

// What one BEGIN / COMMIT / SAVEPOINT / DECLARE / FETCH / ... statement asks.
struct BlockCommand {
  enum class Kind {
    Begin,           // BEGIN, START TRANSACTION
    Commit,          // COMMIT, END
    Rollback,        // ROLLBACK, ABORT
    Savepoint,       // SAVEPOINT s
    Release,         // RELEASE [SAVEPOINT] s
    RollbackTo,      // ROLLBACK [WORK|TRANSACTION] TO [SAVEPOINT] s
    SetTransaction,  // SET TRANSACTION ..., SET SESSION CHARACTERISTICS AS TRANSACTION ...
    Declare,         // DECLARE c [BINARY] [NO SCROLL] CURSOR [WITH[OUT] HOLD] FOR query
    Fetch,           // FETCH [NEXT | FORWARD [n|ALL] | n | ALL] [FROM|IN] c
    Move,            // MOVE, as FETCH, without the rows
    Close,           // CLOSE c | ALL
  };
  Kind kind = Kind::Begin;
  std::string name;  // the savepoint's or cursor's name (lower-cased unless quoted)
  size_t namePos = 0;
  bool readOnly = false;  // BEGIN/SET TRANSACTION ... READ ONLY
  bool hold = false;      // DECLARE ... WITH HOLD
  bool binary = false;    // DECLARE BINARY: rows in binary format
  int64_t count = 1;      // FETCH / MOVE: rows; kAll: every row
  bool all = false;       // CLOSE ALL
  static constexpr int64_t kAll = INT64_MAX;
};

// Reads a block statement's words; throws 42601 at the first word that does
// not fit, and 0A000 for what PostgreSQL has and rtsql does not (backward
// FETCH, SCROLL cursors).
BlockCommand readBlockCommand(const ast::BlockStatement& stmt);

// One session's transaction block.
class TransactionBlock {
 public:
  enum class State { Idle, InBlock, Failed };
  // What ending a block did: there was none (a WARNING 25P01), it committed,
  // or it was failed and so rolled back (COMMIT then answers ROLLBACK).
  enum class Ended { NoBlock, Committed, RolledBack };

  State state() const { return state_.load(); }
  bool active() const { return state() != State::Idle; }
  // ReadyForQuery's status byte: 'I', 'T' or 'E'. Any thread.
  char status() const;

  // BEGIN: false when a block was open already (a WARNING 25001, nothing changes).
  bool begin();
  Ended commit();
  Ended rollback();
  // A statement in the block failed: every later one but ROLLBACK (or
  // ROLLBACK TO a savepoint) answers 25P02 until then.
  void fail();
  // Throws 25P02 in a failed block for a statement that does not end it
  // (`endsBlock`: COMMIT, ROLLBACK, ROLLBACK TO).
  void admit(bool endsBlock, size_t pos) const;

  // READ ONLY (BEGIN, SET TRANSACTION): the block may not change the catalog.
  bool readOnly() const { return readOnly_; }
  void setReadOnly(bool on) { readOnly_ = on; }

  // SAVEPOINT s with `mark`, what the caller needs to go back to it (the
  // count of its statements so far). Throws 25P01 outside a block.
  void savepoint(const std::string& name, size_t mark, size_t pos);
  // RELEASE s: forgets s and the savepoints after it. Throws 3B001 when
  // there is no such savepoint, 25P01 outside a block.
  void release(const std::string& name, size_t pos);
  // ROLLBACK TO s: the savepoints after s are forgotten (s stays), the block
  // is no longer failed, and s's mark is returned. Throws as release().
  size_t rollbackTo(const std::string& name, size_t pos);

 private:
  size_t find(const std::string& name, size_t pos) const;
  struct Savepoint {
    std::string name;
    size_t mark = 0;
  };
  std::atomic<State> state_{State::Idle};
  std::vector<Savepoint> savepoints_;
  bool readOnly_ = false;
};

}  // namespace rtsql
