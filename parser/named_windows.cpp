// Named windows: `WINDOW w AS (PARTITION BY k ORDER BY ts)` in a SELECT, and
// the OVER clauses of that SELECT that name it.
//
//   f(...) OVER w            w as defined (Spark's form; also OVER (w))
//   f(...) OVER (w ORDER BY y [frame])
//                            w refined, as the SQL standard and PostgreSQL
//                            allow (Spark does not): the refining window takes
//                            w's PARTITION BY, may add an ORDER BY when w has
//                            none, and may add a frame
//   WINDOW w2 AS w, w3 AS (w ORDER BY y)
//                            a definition may name another of the same clause,
//                            before or after it
//
// A name is resolved where it is written into the parse-tree parts of its
// definition (PARTITION BY expressions, ORDER BY items, frame), and the AST
// builder builds each OVER from those parts as if it had been written out, so
// everything after the parser sees plain OVER (...) clauses and a named
// window works wherever OVER works. Names are case-insensitive and belong to
// one SELECT: a subquery neither sees its enclosing query's windows nor lends
// its own.
//
// Errors are 42P20 (windowing error): a name not defined (Spark's
// MISSING_WINDOW_SPECIFICATION), a name defined twice (PostgreSQL's SQLSTATE;
// Spark raises 42000 REPETITIVE_WINDOW_DEFINITION), a definition that names
// itself, and a refinement against the rules (PARTITION BY in a refining
// window, an ORDER BY over w's, a window with a frame refined), each at the
// position of what breaks the rule.
#include <fmt/format.h>

#include "common/error.h"
#include "common/schema.h"
#include "parser/ast_builder.h"

namespace rtsql::parser {

AstBuilder::WindowScope::WindowScope(AstBuilder& b, P::WindowClauseContext* clause) : b_(b) {
  std::map<std::string, NamedWindow> windows;
  if (clause != nullptr) {
    for (auto* def : clause->namedWindow()) {
      const std::string name = toLower(b.identifier(def->name));
      NamedWindow w;
      w.spec = def->windowSpec();
      if (!windows.emplace(name, w).second) {
        throw SqlError(sqlstate::kWindowingError,
                       fmt::format("window \"{}\" is defined twice", name), b.startOf(def->name))
            .withHint("give each window of the WINDOW clause its own name");
      }
    }
  }
  b.windowScopes_.push_back(std::move(windows));
}

const AstBuilder::WindowParts& AstBuilder::namedWindow(P::IdentifierContext* nameCtx) {
  const std::string name = toLower(identifier(nameCtx));
  const size_t pos = startOf(nameCtx);
  NamedWindow* w = nullptr;
  if (!windowScopes_.empty()) {
    auto it = windowScopes_.back().find(name);
    if (it != windowScopes_.back().end()) w = &it->second;
  }
  if (w == nullptr) {
    throw SqlError(sqlstate::kWindowingError,
                   fmt::format("window \"{}\" is not defined in the WINDOW clause", name), pos)
        .withHint(fmt::format("define it after the SELECT's FROM, WHERE, GROUP BY and HAVING: "
                              "WINDOW {} AS (PARTITION BY k ORDER BY ts)",
                              name));
  }
  if (w->state == NamedWindow::State::Resolving) {
    throw SqlError(sqlstate::kWindowingError,
                   fmt::format("window \"{}\" is defined in terms of itself", name), pos)
        .withHint("define one of the windows with PARTITION BY and ORDER BY of its own");
  }
  if (w->state == NamedWindow::State::Unresolved) {
    w->state = NamedWindow::State::Resolving;
    w->parts = windowParts(w->spec);
    w->state = NamedWindow::State::Resolved;
  }
  return w->parts;
}

AstBuilder::WindowParts AstBuilder::windowParts(P::WindowSpecContext* spec) {
  if (spec->name != nullptr) return namedWindow(spec->name);
  WindowParts own;
  own.partition = spec->partition;
  own.order = spec->orderItem();
  own.frame = spec->windowFrame();
  if (spec->base == nullptr) return own;

  const std::string name = toLower(identifier(spec->base));
  const WindowParts& base = namedWindow(spec->base);
  // `OVER (w)` is `OVER w`, frame included (Spark's form).
  if (own.partition.empty() && own.order.empty() && own.frame == nullptr) return base;
  if (!own.partition.empty()) {
    throw SqlError(sqlstate::kWindowingError,
                   fmt::format("cannot override the PARTITION BY of window \"{}\"", name),
                   startOf(spec->PARTITION()->getSymbol()))
        .withHint(fmt::format("a window refining \"{}\" takes its PARTITION BY; define another "
                              "window for another partitioning",
                              name));
  }
  if (!own.order.empty() && !base.order.empty()) {
    throw SqlError(sqlstate::kWindowingError,
                   fmt::format("cannot override the ORDER BY of window \"{}\"", name),
                   startOf(spec->ORDER()->getSymbol()))
        .withHint(fmt::format("refine a window without ORDER BY: WINDOW p AS (PARTITION BY k), "
                              "then OVER (p ORDER BY y)"));
  }
  if (base.frame != nullptr) {
    throw SqlError(sqlstate::kWindowingError,
                   fmt::format("cannot refine window \"{}\", which has a frame", name),
                   startOf(spec->base))
        .withHint(fmt::format("name it alone, OVER {}, or move the frame out of its definition",
                              name));
  }
  WindowParts out = base;
  if (!own.order.empty()) out.order = own.order;
  out.frame = own.frame;
  return out;
}

}  // namespace rtsql::parser
