#include "client/completion.h"

#include <doctest/doctest.h>

using namespace rtsql::client;

namespace {

using Words = std::vector<std::string>;

ObjectNames sampleNames() {
  ObjectNames n;
  n.sources = {"clicks", "orders"};
  n.sinks = {"alerts", "audit"};
  n.tables = {"merchants"};
  n.flows = {"fraud_alerts", "big_spenders"};
  return n;
}

}  // namespace

TEST_CASE("keywords complete at the start and follow the typed case") {
  const ObjectNames n = sampleNames();
  CHECK(completionCandidates("", "SEL", n) == Words{"SELECT"});
  CHECK(completionCandidates("", "sel", n) == Words{"select"});
  CHECK(completionCandidates("", "Sel", n) == Words{"SELECT"});
  const Words d = completionCandidates("", "DE", n);
  CHECK(d == Words{"DESC", "DESCRIBE"});
}

TEST_CASE("the word after CREATE, DROP, SHOW, STOP, TRIGGER is a fixed keyword") {
  const ObjectNames n = sampleNames();
  CHECK(completionCandidates("CREATE ", "S", n) == Words{"SINK", "SOURCE"});
  CHECK(completionCandidates("create ", "f", n) == Words{"flow"});
  CHECK(completionCandidates("SHOW ", "", n) ==
        Words{"FLOWS", "FUNCTIONS", "PROGRESS", "SINKS", "SOURCES", "TABLES"});
  CHECK(completionCandidates("STOP ", "", n) == Words{"FLOW"});
  CHECK(completionCandidates("CREATE FLOW f INTO alerts TRIGGER ", "R", n) == Words{"REALTIME"});
  CHECK(completionCandidates("SELECT a FROM clicks GROUP ", "", n) == Words{"BY"});
}

TEST_CASE("object names complete where the grammar takes them") {
  const ObjectNames n = sampleNames();
  CHECK(completionCandidates("SELECT * FROM ", "", n) == Words{"clicks", "merchants", "orders"});
  CHECK(completionCandidates("SELECT * FROM clicks JOIN ", "m", n) == Words{"merchants"});
  CHECK(completionCandidates("STOP FLOW ", "f", n) == Words{"fraud_alerts"});
  CHECK(completionCandidates("start flow ", "", n) == Words{"big_spenders", "fraud_alerts"});
  CHECK(completionCandidates("SHOW PROGRESS ", "b", n) == Words{"big_spenders"});
  CHECK(completionCandidates("CREATE FLOW f INTO ", "a", n) == Words{"alerts", "audit"});
  CHECK(completionCandidates("DROP SINK ", "", n) == Words{"IF", "alerts", "audit"});
  CHECK(completionCandidates("DROP FLOW IF EXISTS ", "", n) ==
        Words{"big_spenders", "fraud_alerts"});
  CHECK(completionCandidates("DESCRIBE ", "a", n) == Words{"alerts", "audit"});
  CHECK(completionCandidates("\\progress ", "", n) == Words{"big_spenders", "fraud_alerts"});
  // Names match regardless of case and come back as the server spells them.
  CHECK(completionCandidates("SELECT * FROM ", "CL", n) == Words{"clicks"});
}

TEST_CASE("only the current statement counts") {
  const ObjectNames n = sampleNames();
  CHECK(completionCandidates("STOP FLOW x; CREATE ", "T", n) == Words{"TABLE"});
  CHECK(completionCandidates("SELECT *\nFROM ", "o", n) == Words{"orders"});
}

TEST_CASE("backslash commands complete at the start of the line") {
  const ObjectNames n = sampleNames();
  CHECK(completionCandidates("", "\\t", n) == Words{"\\tables", "\\timing"});
  CHECK(completionCandidates("", "\\s", n) == Words{"\\sinks", "\\sources"});
  CHECK(completionCandidates("\\timing ", "", n).empty());
  CHECK(completionCandidates("", "\\d", n) == Words{"\\d"});
  CHECK(completionCandidates("", "\\i", n) == Words{"\\i"});
}

TEST_CASE("\\d completes the name of any object") {
  const ObjectNames n = sampleNames();
  CHECK(completionCandidates("\\d ", "", n) ==
        Words{"alerts", "audit", "big_spenders", "clicks", "fraud_alerts", "merchants", "orders"});
  CHECK(completionCandidates("\\d ", "a", n) == Words{"alerts", "audit"});
  CHECK(completionWantsNames("\\d "));
  CHECK(completionCandidates("EXPLAIN ", "F", n) == Words{"FLOW"});
  CHECK(completionCandidates("EXPLAIN FLOW ", "f", n) == Words{"fraud_alerts"});
}

TEST_CASE("only functions the server lists complete, in the typed case") {
  ObjectNames n = sampleNames();
  // Without the server's list no function is offered: none is made up.
  CHECK(completionCandidates("SELECT ", "COU", n).empty());
  CHECK(completionCandidates("SELECT ", "TUM", n).empty());
  CHECK(completionCandidates("SELECT ", "HO", n).empty());
  n.functions = {"count", "coalesce", "upper"};
  CHECK(completionCandidates("SELECT ", "co", n) == Words{"coalesce", "count"});
  CHECK(completionCandidates("SELECT ", "COU", n) == Words{"COUNT"});
  CHECK(completionCandidates("SELECT a FROM t WHERE ", "up", n) == Words{"upper"});
  // Where only names or fixed keywords fit, functions are not offered.
  CHECK(completionCandidates("SELECT * FROM ", "co", n).empty());
  CHECK(completionCandidates("CREATE ", "co", n).empty());
  CHECK(completionWantsFunctions("SELECT "));
  CHECK(completionWantsFunctions("SELECT a, "));
  CHECK_FALSE(completionWantsFunctions("SELECT * FROM "));
  CHECK_FALSE(completionWantsFunctions("CREATE "));
  CHECK_FALSE(completionWantsFunctions("\\d "));
}

TEST_CASE("names are fetched only where they can be used") {
  CHECK(completionWantsNames("SELECT * FROM "));
  CHECK(completionWantsNames("STOP FLOW "));
  CHECK(completionWantsNames("DROP TABLE "));
  CHECK(completionWantsNames("\\progress "));
  CHECK_FALSE(completionWantsNames(""));
  CHECK_FALSE(completionWantsNames("CREATE "));
  CHECK_FALSE(completionWantsNames("SELECT a, "));
}
