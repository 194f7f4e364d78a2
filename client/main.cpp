// rtsql: the command-line shell for rtsqld. Argument handling lives here; the
// work is in shell.cpp (interactive), script.cpp (-f, -c) and printer.cpp.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "client/connection.h"
#include "client/deploy_plan.h"
#include "client/script.h"
#include "client/shell.h"
#include "client/variables.h"

#ifndef RTSQL_VERSION
#define RTSQL_VERSION "0.0.0"
#endif

namespace {

bool readAll(const std::string& path, std::string* text) {
  if (path == "-") {
    std::ostringstream ss;
    ss << std::cin.rdbuf();
    *text = ss.str();
    return !std::cin.bad();
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  text->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace rtsql::client;

  ConnectOptions connect;
  RunOptions run;
  std::string file;
  std::string command;

  CLI::App app{"rtsql: the shell for the rtsqld streaming SQL server.\n"
               "Without -f or -c it reads statements interactively (or a script from a "
               "non-terminal stdin).",
               "rtsql"};
  // -h is the host, as in psql; help is --help only.
  app.set_help_flag("--help", "Show this help and exit");
  app.set_version_flag("--version", std::string("rtsql ") + RTSQL_VERSION);
  app.add_option("-h,--host", connect.host, "Server host (env RTSQL_HOST)")
      ->envname("RTSQL_HOST")
      ->capture_default_str();
  app.add_option("-p,--port", connect.port, "Server port (env RTSQL_PORT)")
      ->envname("RTSQL_PORT")
      ->capture_default_str();
  app.add_option("-U,--user", connect.user, "User name");
  app.add_option("-d,--dbname", connect.dbname, "Database name");
  auto* fileOpt = app.add_option(
      "-f,--file", file, "Run the statements of FILE ('-' for stdin), stop at the first error");
  auto* commandOpt =
      app.add_option("-c,--command", command, "Run SQL as one query and exit");
  fileOpt->excludes(commandOpt);
  bool singleTransaction = false;
  app.add_flag("-1,--single-transaction", singleTransaction,
               "With -f: run the script in one transaction (BEGIN ... COMMIT); at the first "
               "error, ROLLBACK, so that none of it is applied");
  bool dryRun = false;
  app.add_flag("--dry-run", dryRun,
               "With -f or -c: parse, bind and plan every statement against the server's "
               "catalog, create and start nothing");
  bool plan = false;
  bool apply = false;
  auto* planOpt = app.add_flag(
      "--plan", plan,
      "With -f: compare the script with what the server runs and print what applying it "
      "would create, replace (with each flow's state plan) and leave alone; change nothing");
  auto* applyOpt = app.add_flag("--apply", apply,
                                "With -f: run the script, statement by statement (as -f does)");
  planOpt->excludes(applyOpt);
  planOpt->excludes(commandOpt);
  applyOpt->excludes(commandOpt);
  app.add_flag("-e,--echo", run.echo, "Print each statement before running it");
  app.add_flag("-q,--quiet", run.print.quiet, "Leave out command tags and the banner");
  std::vector<std::string> assignments;
  app.add_option("-v,--set", assignments,
                 "Set variable NAME to VALUE (repeatable); statements use it as :NAME, "
                 ":'NAME' (quoted literal) or :\"NAME\" (quoted identifier)")
      ->type_name("NAME=VALUE")
      ->allow_extra_args(false);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }

  for (const auto& assignment : assignments) {
    std::string name;
    std::string value;
    std::string error;
    if (!parseVariableAssignment(assignment, &name, &value, &error)) {
      std::cerr << "rtsql: -v: " << error << '\n';
      return kExitUsage;
    }
    run.variables[name] = value;
  }

  const bool interactive = file.empty() && commandOpt->count() == 0 && isatty(STDIN_FILENO);
  std::string script;
  std::string sourceName;
  if (!file.empty()) {
    if (!readAll(file, &script)) {
      std::cerr << "rtsql: cannot read " << file << ": " << std::strerror(errno) << '\n';
      return kExitSqlError;
    }
    sourceName = file == "-" ? "<stdin>" : file;
  } else if (commandOpt->count() == 0 && !interactive) {
    // Statements piped in without -f are a script read from stdin.
    readAll("-", &script);
    sourceName = "<stdin>";
  }

  std::string error;
  auto conn = Connection::open(connect, &error);
  if (!conn) {
    std::cerr << "rtsql: could not connect to rtsqld at " << connect.host << ":"
              << connect.port << ": " << error << '\n';
    return kExitConnection;
  }
  installInterruptHandler();

  if ((plan || apply) && file.empty()) {
    std::cerr << "rtsql: --plan and --apply need -f\n";
    return kExitUsage;
  }
  if (plan) return planDeployment(*conn, script, sourceName, std::cout, std::cerr);
  if (dryRun) {
    if (interactive) {
      std::cerr << "rtsql: --dry-run needs -f or -c\n";
      return kExitUsage;
    }
    // The session validates from now on: definitions go to a copy of the
    // catalog that only this session sees, flows are planned and not started.
    const Outcome outcome = conn->execute("SET rtsql.dry_run = 'on'");
    if (outcome.error || outcome.connectionLost) {
      std::cerr << "rtsql: the server refused the dry run: "
                << (outcome.error ? outcome.error->message : conn->lastError()) << '\n';
      return outcome.connectionLost ? kExitConnection : kExitSqlError;
    }
  }
  int code = kExitOk;
  if (commandOpt->count() > 0) {
    code = runCommand(*conn, command, run, std::cout, std::cerr);
  } else if (!interactive && singleTransaction) {
    code = runScriptInOneTransaction(*conn, script, sourceName, run, std::cout, std::cerr);
  } else if (!interactive) {
    code = runScript(*conn, script, sourceName, run, std::cout, std::cerr);
  } else {
    return runShell(*conn, run);
  }
  if (dryRun && code == kExitOk && !run.print.quiet) {
    std::cout << "dry run: every statement is valid; nothing was created\n";
  }
  return code;

}
