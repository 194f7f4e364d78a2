// Bounded relations: the finite inputs a bounded query reads (SELECT over
// static tables, docs/sql.md "Bounded queries"). This is the one seam through
// which such an input comes in:
//
//   class MyRelation final : public BoundedRelation {
//     const Schema& schema() const override;           // the columns, as FROM sees them
//     std::unique_ptr<RowSource> open() const override; // its rows, from the first
//   };
//
// and a case in the lookup that the server hands the planner
// (PlanContext::boundedRelation; the server's is boundedRelationOf in
// server/bounded_query.cpp). The planner plans a named relation it returns as a
// scan of connector kBoundedConnector with that schema, and the bounded run
// opens one RowSource for it: the same operators as a flow's then filter,
// join, aggregate and sort its rows. Static tables are the first kind
// (StaticTableRelation); a materialized view's committed snapshot, a catalog
// relation computed at query time and the rows of a view read from the node
// of the cluster that holds it (server/views/view_remote.h) plug in the same
// way.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/schema.h"
#include "common/value.h"

namespace rtsql {

// The connector name of a bounded relation's scan in a physical plan.
inline constexpr const char* kBoundedConnector = "bounded";

// A finite sequence of rows, read once from one thread.
class RowSource {
 public:
  virtual ~RowSource() = default;
  // Sets `out` to the next row (in the relation's schema) and returns true,
  // or returns false once every row has been read.
  virtual bool next(Row& out) = 0;
};

// Rows held in memory, read from the first: a static table's, the catalog's
// as PostgreSQL shows it, a view's read from the node that holds it.
class RowVectorSource final : public RowSource {
 public:
  explicit RowVectorSource(std::shared_ptr<const std::vector<Row>> rows) : rows_(std::move(rows)) {}
  bool next(Row& out) override {
    if (!rows_ || at_ >= rows_->size()) return false;
    out = (*rows_)[at_++];
    return true;
  }

 private:
  std::shared_ptr<const std::vector<Row>> rows_;
  size_t at_ = 0;
};

class BoundedRelation {
 public:
  virtual ~BoundedRelation() = default;
  // The rows' columns (hidden ones included, as a source's are).
  virtual const Schema& schema() const = 0;
  // Its rows as of now; each call starts from the first row.
  virtual std::unique_ptr<RowSource> open() const = 0;
};

// Rows held in memory as a relation: the catalog's as PostgreSQL shows it,
// computed when the query is planned, or a view's read from the node that
// holds it.
class RowsRelation : public BoundedRelation {
 public:
  RowsRelation(Schema schema, std::shared_ptr<const std::vector<Row>> rows)
      : schema_(std::move(schema)), rows_(std::move(rows)) {}
  const Schema& schema() const override { return schema_; }
  std::unique_ptr<RowSource> open() const override {
    return std::make_unique<RowVectorSource>(rows_);
  }

 private:
  Schema schema_;
  std::shared_ptr<const std::vector<Row>> rows_;
};

}  // namespace rtsql
