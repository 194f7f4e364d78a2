// The rtsql SQL grammar: every statement the server and the shell accept.
//
// Keywords are case-insensitive through letter fragments, because the generator
// we build with (antlr4 4.7.2) has no caseInsensitive option. Words that users
// commonly pick as column names (timestamp, key, window, start, source, ...) are
// either not keywords at all or listed in `nonReserved`, so they still work as
// identifiers. After a '.', and after AS, any word is accepted, so `window.end`
// and `AS end` work even though END is reserved.
//
// Optimizer hints `/*+ ... */` travel on their own channel: parser/ reads them
// from the token stream right after SELECT, so a hint anywhere else is ignored
// like a comment, as Spark does.
grammar RtSql;

// ------------------------------------------------------------------ scripts

script
    : SEMI* (statement (SEMI+ statement)* SEMI*)? EOF
    ;

statement
    : createSource
    | createTable
    | createSink
    | createFlow
    | createMaterializedView
    | createFunction
    | createProcessor
    | insertStatement
    | dropStatement
    | dropMaterializedView
    | flowCommand
    // Before SHOW (dottedWord): SHOW SAVEPOINTS is this statement, not a variable.
    | savepointStatement
    | showStatement
    | describeStatement
    | explainStatement
    | setStatement
    | setTimeZoneStatement
    | userStatement
    | alterStatement
    | blockStatement
    | query
    ;

createSource
    : CREATE SOURCE (IF NOT EXISTS)? name=identifier
      (LPAREN sourceElement (COMMA sourceElement)* RPAREN)?
      withOptions?
    ;

sourceElement
    : watermarkDef
    | columnDef
    ;

watermarkDef
    : WATERMARK FOR column=identifier AS expr
    ;

createTable
    : CREATE TABLE (IF NOT EXISTS)? name=identifier
      (LPAREN columnDef (COMMA columnDef)* RPAREN)?
      withOptions?
    ;

columnDef
    : identifier dataType (NOT NULL_)?
    ;

createSink
    : CREATE SINK (IF NOT EXISTS)? name=identifier withOptions?
    ;

createFlow
    : CREATE (OR REPLACE)? FLOW (IF NOT EXISTS)? name=identifier INTO sink=identifier
      flowClause* resetStateClause? fromSavepointClause? AS query
    ;

// CREATE OR REPLACE FLOW only: the new plan starts from a savepoint taken of
// it (a deployment rolled back), not from the running plan's state.
fromSavepointClause
    : FROM SAVEPOINT savepoint=identifier
    ;

// CREATE OR REPLACE FLOW only: the state to start empty, all of it or the
// operators named by their ids (EXPLAIN CREATE OR REPLACE FLOW prints them).
resetStateClause
    : RESET STATE (LPAREN INTEGER_VALUE (COMMA INTEGER_VALUE)* RPAREN)?
    ;

// A flow whose sink is a keyed table rtsqld keeps and answers SELECTs from.
createMaterializedView
    : CREATE (OR REPLACE)? MATERIALIZED VIEW (IF NOT EXISTS)? name=identifier flowClause*
      resetStateClause? AS query
    ;

flowClause
    : TRIGGER REALTIME                        # triggerClause
    | CHECKPOINT INTERVAL interval=STRING     # checkpointClause
    | withOptions                             # flowOptionsClause
    ;

// A SQL function: an expression over its parameters, inlined where it is
// called. LANGUAGE PYTHON: the body of a Python def, written between $$;
// VECTORIZED: a def over lists, called once per batch of rows.
createFunction
    : CREATE (OR REPLACE)? FUNCTION (IF NOT EXISTS)? name=identifier
      LPAREN (functionParam (COMMA functionParam)*)? RPAREN
      RETURNS returnType=dataType (LANGUAGE language=identifier)? VECTORIZED?
      AS (body=expr | code=DOLLAR_STRING)
    ;

functionParam
    : identifier dataType
    ;

// A stateful processor: a Python class called per partition key with the
// key's rows and its own state, used by TRANSFORM(... USING PROCESSOR name).
createProcessor
    : CREATE (OR REPLACE)? PROCESSOR (IF NOT EXISTS)? name=identifier
      RETURNS LPAREN columnDef (COMMA columnDef)* RPAREN
      LANGUAGE language=identifier AS code=DOLLAR_STRING
    ;

withOptions
    : WITH LPAREN (option (COMMA option)*)? RPAREN
    ;

option
    : optionKey EQ optionValue
    ;

optionKey
    : STRING
    | dottedWord
    ;

optionValue
    : STRING
    | MINUS? (INTEGER_VALUE | DECIMAL_VALUE)
    | TRUE_
    | FALSE_
    | dottedWord
    ;

dottedWord
    : anyWord (DOT anyWord)*
    ;

insertStatement
    : INSERT INTO table=identifier
      (LPAREN identifier (COMMA identifier)* RPAREN)?
      (VALUES valuesRow (COMMA valuesRow)* | query)
    ;

valuesRow
    : LPAREN expr (COMMA expr)* RPAREN
    ;

dropStatement
    : DROP objectKind (IF EXISTS)? identifier
    ;

objectKind
    : SOURCE
    | SINK
    | TABLE
    | FLOW
    | FUNCTION
    | PROCESSOR
    ;

dropMaterializedView
    : DROP MATERIALIZED VIEW (IF EXISTS)? identifier
    ;

flowCommand
    : STOP FLOW identifier
    | START FLOW identifier (RESET STATE)?
    ;

// A flow's named copies of a checkpoint (server/savepoints.cpp).
savepointStatement
    : STOP FLOW flow=identifier WITH SAVEPOINT savepoint=identifier    # stopWithSavepoint
    | START FLOW flow=identifier FROM SAVEPOINT savepoint=identifier   # startFromSavepoint
    | SHOW SAVEPOINTS (FOR flow=identifier)?                           # showSavepoints
    | DROP SAVEPOINT savepoint=identifier (FOR flow=identifier)?       # dropSavepoint
    ;

showStatement
    : SHOW SOURCES                  # showSources
    | SHOW SINKS                    # showSinks
    | SHOW TABLES                   # showTables
    | SHOW FLOWS                    # showFlows
    | SHOW USER FUNCTIONS           # showUserFunctions
    | SHOW PROCESSORS               # showProcessors
    | SHOW FUNCTIONS                # showFunctions
    | SHOW PROGRESS identifier      # showProgress
    | SHOW USERS                    # showUsers
    | SHOW CREATE objectKind identifier  # showCreate
    | SHOW CREATE MATERIALIZED VIEW identifier  # showCreateView
    | SHOW MATERIALIZED VIEWS       # showMaterializedViews
    | SHOW (STRING | dottedWord)    # showVariable
    // PostgreSQL's settings named in words: SHOW TRANSACTION ISOLATION LEVEL.
    | SHOW anyWord anyWord+         # showWords
    ;

// Users of the --users-file, PostgreSQL's spelling. The password is always a
// string literal, so it is one token the parser never echoes in an error.
userStatement
    : CREATE USER (IF NOT EXISTS)? name=identifier WITH? PASSWORD password=STRING  # createUser
    | ALTER USER name=identifier WITH? PASSWORD password=STRING                     # alterUser
    | DROP USER (IF EXISTS)? name=identifier                                         # dropUser
    ;

// ALTER SOURCE | SINK | FLOW name SET ('k' = 'v', ...) | RESET ('k', ...): the
// options that may change while flows run (server/alter.cpp says which).
alterStatement
    : ALTER objectKind name=identifier SET LPAREN option (COMMA option)* RPAREN     # alterSet
    | ALTER objectKind name=identifier RESET LPAREN optionKey (COMMA optionKey)* RPAREN  # alterReset
    // A materialized view's flow options, as ALTER FLOW changes a flow's.
    | ALTER MATERIALIZED VIEW name=identifier SET LPAREN option (COMMA option)* RPAREN       # alterViewSet
    | ALTER MATERIALIZED VIEW name=identifier RESET LPAREN optionKey (COMMA optionKey)* RPAREN  # alterViewReset
    ;

describeStatement
    : (DESCRIBE | DESC) objectKind? identifier
    ;

explainStatement
    : EXPLAIN (createFlow | query)
    | EXPLAIN FLOW flowName=identifier
    | EXPLAIN createMaterializedView
    | EXPLAIN MATERIALIZED VIEW viewName=identifier
    ;

setStatement
    : SET (scope=identifier)? (key=STRING | dottedWord) (EQ | TO) optionValue
    ;

// SET TIME ZONE 'Europe/Paris' | LOCAL | DEFAULT, PostgreSQL's and Spark's
// spelling of SET timezone; TIME and ZONE are words, not keywords.
setTimeZoneStatement
    : SET (scope=identifier)? timeWord=identifier zoneWord=identifier optionValue
    ;

// Transaction blocks and cursors in PostgreSQL's spelling: BEGIN, START
// TRANSACTION, COMMIT, END, ROLLBACK, ABORT, SAVEPOINT, RELEASE, SET
// TRANSACTION, SET SESSION CHARACTERISTICS, FETCH, MOVE, CLOSE, and DECLARE
// ... CURSOR ... FOR query. Their words are read by server/transaction.h, which
// answers a syntax error for a sequence it does not know.
blockStatement
    : DECLARE blockWord+ FOR query                                                  # declareCursor
    | head=(BEGIN | COMMIT | END | ROLLBACK | ABORT | SAVEPOINT | RELEASE | FETCH | MOVE | CLOSE)
      blockWord*                                                                    # blockCommand
    | START TRANSACTION blockWord*                                                  # blockStartCommand
    | SET (TRANSACTION | identifier identifier AS TRANSACTION) blockWord*           # blockSetCommand
    ;

blockWord
    : identifier
    | WITH | NOT | AS | FROM | IN | ALL | COMMA
    | MINUS? INTEGER_VALUE
    ;

// ------------------------------------------------------------------ queries

query
    : queryTerm (UNION ALL? queryTerm)*
      (ORDER BY orderItem (COMMA orderItem)*)?
      (LIMIT limit=INTEGER_VALUE)?
      (OFFSET offset=INTEGER_VALUE)?
    ;

queryTerm
    : selectCore
    | LPAREN query RPAREN
    ;

selectCore
    : SELECT setQuantifier? selectItem (COMMA selectItem)*
      (FROM relation (COMMA relation)*)?
      (WHERE where=expr)?
      (GROUP BY expr (COMMA expr)*)?
      (HAVING having=expr)?
      windowClause?
      (EMIT ON WINDOW CLOSE)?
    ;

// WINDOW w AS (PARTITION BY ... ORDER BY ...), w2 AS w: named windows, which
// an OVER clause of the same SELECT names (parser/ast_builder.cpp resolves them).
windowClause
    : WINDOW namedWindow (COMMA namedWindow)*
    ;

namedWindow
    : name=identifier AS windowSpec
    ;

setQuantifier
    : DISTINCT (ON LPAREN expr (COMMA expr)* RPAREN (WITHIN WATERMARK)?)?
    | ALL
    ;

selectItem
    : expr (AS anyWord | identifier)?
    ;

orderItem
    : expr (ASC | DESC)? (NULLS nullOrder=(FIRST | LAST))?
    ;

relation
    : relationPrimary joinPart*
    ;

joinPart
    : joinType JOIN relationPrimary ON expr
    | CROSS JOIN relationPrimary
    ;

joinType
    : INNER?
    | LEFT OUTER?
    | RIGHT OUTER?
    | FULL OUTER?
    ;

relationPrimary
    : identifier offsetRange? tableAlias?    # namedRelation
    | LPAREN query RPAREN tableAlias?        # subqueryRelation
    | LPAREN relation RPAREN                 # nestedRelation
    | TRANSFORM LPAREN input=relationPrimary
      PARTITION BY expr (COMMA expr)*
      USING PROCESSOR processor=identifier withOptions? RPAREN tableAlias?  # transformRelation
    // pg_catalog.pg_class, information_schema.tables, public.clicks.
    | schema=identifier DOT name=fieldName tableAlias?  # qualifiedRelation
    // A set-returning function: unnest(a) x, pg_catalog.generate_series(1, 3) s.
    | (fschema=identifier DOT)? fname=identifier LPAREN (expr (COMMA expr)*)? RPAREN tableAlias?  # functionRelation
    ;

// A bounded read of a source: FROM s FOR OFFSETS BETWEEN 'earliest' AND 'latest'.
offsetRange
    : FOR OFFSETS BETWEEN from=STRING AND to=STRING
    ;

tableAlias
    : AS anyWord
    | identifier
    ;

// ------------------------------------------------------------------ expressions

expr
    : booleanExpr
    | lambda
    ;

// x -> x + 1, (acc, x) -> acc + x: a function of a higher-order function's
// argument (transform, filter, aggregate...). The binder refuses one anywhere else.
lambda
    : params+=identifier ARROW body=expr
    | LPAREN params+=identifier (COMMA params+=identifier)* RPAREN ARROW body=expr
    ;

booleanExpr
    : NOT booleanExpr                                   # notExpr
    | valueExpr predicate?                              # predicated
    | booleanExpr AND booleanExpr                       # andExpr
    | booleanExpr OR booleanExpr                        # orExpr
    ;

predicate
    : NOT? BETWEEN lower=valueExpr AND upper=valueExpr  # betweenPredicate
    | NOT? IN LPAREN query RPAREN                       # inSubqueryPredicate
    | NOT? IN LPAREN expr (COMMA expr)* RPAREN          # inPredicate
    | NOT? LIKE pattern=valueExpr (ESCAPE escape=valueExpr)?  # likePredicate
    | NOT? (RLIKE | REGEXP) pattern=valueExpr           # rlikePredicate
    // IS [NOT] DISTINCT FROM is an alternative of IS [NOT] NULL's, so that
    // an error after IS NOT names both.
    | IS NOT? (NULL_ | DISTINCT FROM right=valueExpr)    # nullPredicate
    ;

valueExpr
    : primary                                                  # primaryValue
    | op=(MINUS | PLUS | TILDE) valueExpr                      # unaryValue
    | valueExpr op=(STAR | SLASH | PERCENT) valueExpr          # binaryValue
    | valueExpr op=(PLUS | MINUS) valueExpr                    # binaryValue
    | valueExpr op=CONCAT valueExpr                            # binaryValue
    // The bitwise operators, bound as Spark binds them: & before ^ before |,
    // all looser than arithmetic and tighter than comparison.
    | valueExpr op=AMPERSAND valueExpr                         # binaryValue
    | valueExpr op=CARET valueExpr                             # binaryValue
    | valueExpr op=PIPE valueExpr                              # binaryValue
    | valueExpr op=(EQ | EQ2 | NEQ | NEQ2 | NSEQ | LT | LTE | GT | GTE) valueExpr   # binaryValue
    // PostgreSQL's regular-expression match operators, and any operator
    // spelled OPERATOR(pg_catalog.~) as psql writes them.
    | valueExpr op=(TILDE | NOT_TILDE | TILDE_STAR | NOT_TILDE_STAR) valueExpr  # regexValue
    | valueExpr OPERATOR LPAREN (schema=identifier DOT)? pgOperator RPAREN valueExpr  # operatorValue
    // x <> ALL (array); x = ANY (array) is a call of `any` to the parser.
    | valueExpr op=(EQ | EQ2 | NEQ | NEQ2 | LT | LTE | GT | GTE) ALL LPAREN expr RPAREN  # allValue
    ;

pgOperator
    : TILDE | NOT_TILDE | TILDE_STAR | NOT_TILDE_STAR
    | EQ | NEQ | LT | LTE | GT | GTE | PLUS | MINUS | STAR | SLASH | PERCENT | CONCAT
    ;

primary
    : literal                                                  # literalPrimary
    | CASE operand=expr? whenClause+ (ELSE elseExpr=expr)? END # casePrimary
    | CAST LPAREN expr AS dataType RPAREN                      # castPrimary
    // try_cast(x AS type): the AST builder checks the name.
    | identifier LPAREN expr AS dataType RPAREN                # tryCastPrimary
    | functionName LPAREN functionArgs? RPAREN nullTreatment? filterClause? overClause?  # callPrimary
    // The SQL standard's forms of five functions (the AST builder checks the name):
    // TRIM(BOTH|LEADING|TRAILING [chars] FROM s), TRIM(chars FROM s),
    // SUBSTRING(s FROM p [FOR n]), EXTRACT(field FROM t),
    // OVERLAY(s PLACING r FROM p [FOR n]), POSITION(sub IN s).
    | identifier LPAREN side=(BOTH | LEADING | TRAILING) chars=valueExpr? FROM src=valueExpr RPAREN  # trimSidePrimary
    | identifier LPAREN a=valueExpr FROM b=valueExpr (FOR c=valueExpr)? RPAREN            # fromForPrimary
    | identifier LPAREN a=valueExpr PLACING b=valueExpr FROM c=valueExpr (FOR d=valueExpr)? RPAREN  # placingPrimary
    | identifier LPAREN a=valueExpr IN b=valueExpr RPAREN                                 # positionInPrimary
    | STAR                                                     # starPrimary
    | identifier (DOT fieldName)* DOT STAR                     # qualifiedStarPrimary
    | identifier (DOT fieldName)*                              # columnPrimary
    | LPAREN query RPAREN                                      # subqueryPrimary
    | EXISTS LPAREN query RPAREN                               # existsPrimary
    | LPAREN expr RPAREN                                       # parenPrimary
    | primary LBRACKET expr RBRACKET                           # subscriptPrimary
    | primary DOT fieldName                                    # fieldPrimary
    | primary DOUBLE_COLON dataType                            # pgCastPrimary
    // PostgreSQL's array constructor, and a collation, which rtsql reads as
    // the byte order that is its only one.
    | ARRAY LBRACKET (expr (COMMA expr)*)? RBRACKET            # arrayConstructorPrimary
    | ARRAY LPAREN query RPAREN                                # arraySubqueryPrimary
    | primary COLLATE collation=collationName                  # collatePrimary
    ;

collationName
    : (schema=identifier DOT)? name=anyWord
    ;

whenClause
    : WHEN condition=expr THEN result=expr
    ;

functionName
    : identifier
    | LEFT
    | RIGHT
    | LIKE
    | qualifiedFunctionName
    // exists(array, x -> ...), Spark's higher-order function; EXISTS (SELECT ...)
    // stays the subquery test.
    | EXISTS
    ;

// pg_catalog.version(): PostgreSQL's functions named with their schema.
qualifiedFunctionName
    : schema=identifier DOT name=anyWord
    ;

// count(x) FILTER (WHERE cond): the aggregate reads only the rows where cond is TRUE.
filterClause
    : FILTER LPAREN WHERE expr RPAREN
    ;

// f(...) OVER (PARTITION BY ... ORDER BY ... [ROWS BETWEEN n PRECEDING AND CURRENT ROW]),
// f(...) OVER w, or f(...) OVER (w ORDER BY ...) refining the named window w.
overClause
    : OVER windowSpec
    ;

windowSpec
    : name=identifier
    | LPAREN base=identifier? (PARTITION BY partition+=expr (COMMA partition+=expr)*)?
      (ORDER BY orderItem (COMMA orderItem)*)? windowFrame? RPAREN
    ;

windowFrame
    : ROWS BETWEEN frameStart AND CURRENT ROW
    | ROWS frameStart
    // Any frame Spark takes, which bounded queries compute (the first two
    // alternatives are the ones a flow's OVER aggregate takes).
    | unit=(ROWS | RANGE) BETWEEN lower=frameBound AND upper=frameBound
    | unit=RANGE frameStart
    ;

frameBound
    : UNBOUNDED (PRECEDING | FOLLOWING)
    | INTEGER_VALUE (PRECEDING | FOLLOWING)
    | CURRENT ROW
    ;

// lag(x) IGNORE NULLS OVER (...): Spark's null treatment of an analytic function.
nullTreatment
    : (IGNORE | RESPECT) NULLS
    ;

frameStart
    : UNBOUNDED PRECEDING
    | INTEGER_VALUE PRECEDING
    | CURRENT ROW
    ;

functionArgs
    : STAR
    | setQuantifier? expr (COMMA expr)* aggregateOrder?
    ;

// array_agg(x ORDER BY k), string_agg(x, sep ORDER BY k): PostgreSQL's
// ordered aggregates.
aggregateOrder
    : ORDER BY orderItem (COMMA orderItem)*
    ;

literal
    : NULL_                                                     # nullLiteral
    | TRUE_                                                     # trueLiteral
    | FALSE_                                                    # falseLiteral
    | INTEGER_VALUE                                            # integerLiteral
    | DECIMAL_VALUE                                            # decimalLiteral
    | STRING                                                   # stringLiteral
    | BINARY_STRING                                            # binaryLiteral
    // INTERVAL '10' SECOND, INTERVAL -'1-2' YEAR TO MONTH (Spark's year-month
    // interval), INTERVAL '1 02:03:04' DAY TO SECOND.
    | INTERVAL MINUS? (STRING | INTEGER_VALUE | DECIMAL_VALUE) (from=intervalUnit (TO to=intervalUnit)?)?  # intervalLiteral
    | TIMESTAMP STRING                                         # timestampLiteral
    | ESCAPE_STRING                                            # escapeStringLiteral
    | DATE STRING                                              # dateLiteral
    | TIMESTAMP_NTZ STRING                                     # timestampNtzLiteral
    | TIMESTAMP_LTZ STRING                                     # timestampLtzLiteral
    ;

intervalUnit
    : YEAR | YEARS
    | MONTH | MONTHS
    | MICROSECOND | MICROSECONDS
    | MILLISECOND | MILLISECONDS
    | SECOND | SECONDS
    | MINUTE | MINUTES
    | HOUR | HOURS
    | DAY | DAYS
    ;

// ------------------------------------------------------------------ types

dataType
    : ARRAY LT dataType GT                                     # arrayType
    | MAP LT dataType COMMA dataType GT                        # mapType
    | STRUCT LT (structField (COMMA structField)*)? GT         # structType
    // PostgreSQL's spellings: pg_catalog.regclass (before simpleType, so that
    // x::pg_catalog.text is a cast to text, not a field of x::pg_catalog), int2[].
    | schema=identifier DOT identifier (LPAREN INTEGER_VALUE (COMMA INTEGER_VALUE)? RPAREN)?  # qualifiedType
    // TIMESTAMP WITHOUT TIME ZONE (TIMESTAMP_NTZ), TIMESTAMP WITH [LOCAL] TIME
    // ZONE (TIMESTAMP); the words after TIMESTAMP are checked by the AST builder.
    | TIMESTAMP (WITH | without=identifier) (local=identifier)? timeWord=identifier zoneWord=identifier  # timestampZoneType
    // INTERVAL YEAR TO MONTH, INTERVAL MONTH, INTERVAL DAY TO SECOND: Spark's
    // interval types (a bare INTERVAL is a simpleType).
    | INTERVAL from=intervalUnit (TO to=intervalUnit)?         # intervalType
    | identifier (LPAREN INTEGER_VALUE (COMMA INTEGER_VALUE)? RPAREN)?   # simpleType
    | dataType LBRACKET RBRACKET                               # pgArrayType
    ;

structField
    : fieldName COLON? dataType
    ;

// ------------------------------------------------------------------ names

identifier
    : IDENTIFIER
    | QUOTED_IDENTIFIER
    | BACKQUOTED_IDENTIFIER
    | nonReserved
    ;

// Any word at all: where the position leaves no doubt (after '.', after AS, in
// option keys), reserved words are names too.
fieldName
    : identifier
    | reserved
    ;

anyWord
    : identifier
    | reserved
    ;

nonReserved
    : ALTER | ARRAY | ASC | BOTH | CHECKPOINT | CLOSE | CREATE | CURRENT | DATE | DAY | DAYS | DESC | DESCRIBE
    | DROP | EXPLAIN | FILTER | FLOW | FLOWS | FUNCTION | FUNCTIONS | HOUR | HOURS | IF | INSERT | INTERVAL
    | LANGUAGE | LEADING | MAP | MICROSECOND | MICROSECONDS | MILLISECOND | MILLISECONDS | MINUTE | MINUTES | OVER
    | MONTH | MONTHS | YEAR | YEARS
    | OFFSET | OFFSETS
    | PARTITION | PASSWORD | PLACING | PRECEDING | PROCESSOR | PROCESSORS | PROGRESS | REALTIME | REGEXP | REPLACE | RESET | RETURNS
    | RLIKE | ROW | ROWS | SAVEPOINT | SAVEPOINTS
    | SECOND | SECONDS | SET | SHOW | UNBOUNDED
    | SINK | SINKS | SOURCE | SOURCES | START | STATE | STOP | STRUCT | TABLE | TABLES | TIMESTAMP | TO | TRIGGER
    | TRAILING | TRANSFORM | USER | USERS | USING | VALUES | VECTORIZED | WATERMARK | WINDOW | WITHIN
    | COLLATE | ESCAPE | OPERATOR
    | ABORT | BEGIN | COMMIT | DECLARE | FETCH | MOVE | RELEASE | ROLLBACK | TRANSACTION
    | MATERIALIZED | VIEW | VIEWS
    | NULLS | FIRST | LAST
    | RANGE | FOLLOWING | IGNORE | RESPECT
    | TIMESTAMP_NTZ | TIMESTAMP_LTZ
    ;

reserved
    : ALL | AND | AS | BETWEEN | BY | CASE | CAST | CROSS | DISTINCT | ELSE | EMIT | END
    | EXISTS | FALSE_ | FOR | FROM | FULL | GROUP | HAVING | IN | INNER | INTO | IS | JOIN
    | LEFT | LIKE | LIMIT | NOT | NULL_ | ON | OR | ORDER | OUTER | RIGHT | SELECT | THEN
    | TRUE_ | UNION | WHEN | WHERE | WITH
    ;

// ------------------------------------------------------------------ lexer

// Reserved keywords.
ALL: A L L;
AND: A N D;
AS: A S;
BETWEEN: B E T W E E N;
BY: B Y;
CASE: C A S E;
CAST: C A S T;
CROSS: C R O S S;
DISTINCT: D I S T I N C T;
ELSE: E L S E;
EMIT: E M I T;
END: E N D;
EXISTS: E X I S T S;
FALSE_: F A L S E;
FOR: F O R;
FROM: F R O M;
FULL: F U L L;
GROUP: G R O U P;
HAVING: H A V I N G;
IN: I N;
INNER: I N N E R;
INTO: I N T O;
IS: I S;
JOIN: J O I N;
LEFT: L E F T;
LIKE: L I K E;
LIMIT: L I M I T;
NOT: N O T;
NULL_: N U L L;
ON: O N;
OR: O R;
ORDER: O R D E R;
OUTER: O U T E R;
RIGHT: R I G H T;
SELECT: S E L E C T;
THEN: T H E N;
TRUE_: T R U E;
UNION: U N I O N;
WHEN: W H E N;
WHERE: W H E R E;
WITH: W I T H;

// Non-reserved keywords.
ALTER: A L T E R;
// Transaction blocks and cursors (blockStatement).
ABORT: A B O R T;
BEGIN: B E G I N;
COMMIT: C O M M I T;
DECLARE: D E C L A R E;
FETCH: F E T C H;
MOVE: M O V E;
RELEASE: R E L E A S E;
ROLLBACK: R O L L B A C K;
TRANSACTION: T R A N S A C T I O N;
ARRAY: A R R A Y;
ASC: A S C;
CHECKPOINT: C H E C K P O I N T;
CLOSE: C L O S E;
CREATE: C R E A T E;
DATE: D A T E;
DAY: D A Y;
DAYS: D A Y S;
DESC: D E S C;
DESCRIBE: D E S C R I B E;
DROP: D R O P;
EXPLAIN: E X P L A I N;
FLOW: F L O W;
FLOWS: F L O W S;
FUNCTION: F U N C T I O N;
FUNCTIONS: F U N C T I O N S;
HOUR: H O U R;
BOTH: B O T H;
LEADING: L E A D I N G;
TRAILING: T R A I L I N G;
PLACING: P L A C I N G;
HOURS: H O U R S;
IF: I F;
INSERT: I N S E R T;
INTERVAL: I N T E R V A L;
LANGUAGE: L A N G U A G E;
MAP: M A P;
MICROSECOND: M I C R O S E C O N D;
MICROSECONDS: M I C R O S E C O N D S;
MILLISECOND: M I L L I S E C O N D;
MILLISECONDS: M I L L I S E C O N D S;
MINUTE: M I N U T E;
MINUTES: M I N U T E S;
MONTH: M O N T H;
MONTHS: M O N T H S;
YEAR: Y E A R;
YEARS: Y E A R S;
MATERIALIZED: M A T E R I A L I Z E D;
PASSWORD: P A S S W O R D;
PROGRESS: P R O G R E S S;
OFFSET: O F F S E T;
OFFSETS: O F F S E T S;
REALTIME: R E A L T I M E;
REGEXP: R E G E X P;
REPLACE: R E P L A C E;
RESET: R E S E T;
RETURNS: R E T U R N S;
RLIKE: R L I K E;
SAVEPOINT: S A V E P O I N T;
SAVEPOINTS: S A V E P O I N T S;
SECOND: S E C O N D;
SECONDS: S E C O N D S;
SET: S E T;
SHOW: S H O W;
SINK: S I N K;
SINKS: S I N K S;
SOURCE: S O U R C E;
SOURCES: S O U R C E S;
START: S T A R T;
STATE: S T A T E;
STOP: S T O P;
STRUCT: S T R U C T;
TABLE: T A B L E;
TABLES: T A B L E S;
TIMESTAMP: T I M E S T A M P;
TIMESTAMP_NTZ: T I M E S T A M P '_' N T Z;
TIMESTAMP_LTZ: T I M E S T A M P '_' L T Z;
TO: T O;
TRIGGER: T R I G G E R;
USER: U S E R;
USERS: U S E R S;
VALUES: V A L U E S;
VECTORIZED: V E C T O R I Z E D;
VIEW: V I E W;
VIEWS: V I E W S;
NULLS: N U L L S;
FIRST: F I R S T;
LAST: L A S T;
WATERMARK: W A T E R M A R K;
WINDOW: W I N D O W;
WITHIN: W I T H I N;
CURRENT: C U R R E N T;
FILTER: F I L T E R;
OVER: O V E R;
PARTITION: P A R T I T I O N;
PROCESSOR: P R O C E S S O R;
PROCESSORS: P R O C E S S O R S;
TRANSFORM: T R A N S F O R M;
USING: U S I N G;
PRECEDING: P R E C E D I N G;
FOLLOWING: F O L L O W I N G;
RANGE: R A N G E;
IGNORE: I G N O R E;
RESPECT: R E S P E C T;
ROW: R O W;
ROWS: R O W S;
UNBOUNDED: U N B O U N D E D;
COLLATE: C O L L A T E;
ESCAPE: E S C A P E;
OPERATOR: O P E R A T O R;

// Punctuation and operators.
SEMI: ';';
COMMA: ',';
DOT: '.';
LPAREN: '(';
RPAREN: ')';
LBRACKET: '[';
RBRACKET: ']';
DOUBLE_COLON: '::';
COLON: ':';
ARROW: '->';
EQ2: '==';
EQ: '=';
NEQ: '<>';
NEQ2: '!=';
// Spark's null-safe equality: equal_null(a, b).
NSEQ: '<=>';
LTE: '<=';
GTE: '>=';
LT: '<';
GT: '>';
PLUS: '+';
MINUS: '-';
STAR: '*';
SLASH: '/';
PERCENT: '%';
CONCAT: '||';
// `||` stays one token (CONCAT): the lexer takes the longest match.
PIPE: '|';
AMPERSAND: '&';
CARET: '^';
NOT_TILDE_STAR: '!~*';
NOT_TILDE: '!~';
TILDE_STAR: '~*';
TILDE: '~';

// Literals and names.
// A backslash takes the next character into the string, so '\'' is a quote,
// as Spark reads it (parser/ast_builder.cpp unescapes it).
STRING: '\'' ( ~['\\] | '\\' . | '\'\'' )* '\'';
// X'48656C6C6F': a BINARY value, as in Spark.
BINARY_STRING: [xX] '\'' [0-9a-fA-F]* '\'';
// Dollar quoting, as PostgreSQL writes a function's code: everything between
// $$ and the next $$ as it is, quotes and newlines included.
DOLLAR_STRING: '$$' .*? '$$';
// E'a\nb': PostgreSQL's string with backslash escapes (psql's \l sends E'\n').
ESCAPE_STRING: [eE] '\'' ( ~['\\] | '\\' . | '\'\'' )* '\'';
INTEGER_VALUE: DIGIT+;
// 1.5BD is a DECIMAL in Spark's spelling (the binder reads the suffix).
DECIMAL_VALUE
    : DIGIT+ '.' DIGIT* EXPONENT?
    | '.' DIGIT+ EXPONENT?
    | DIGIT+ EXPONENT
    | (DIGIT+ ('.' DIGIT*)? | '.' DIGIT+) B D
    // 1.5D and 1e3D are DOUBLEs in Spark's spelling.
    | (DIGIT+ ('.' DIGIT*)? | '.' DIGIT+) EXPONENT? D
    ;
IDENTIFIER: (LETTER | '_') (LETTER | DIGIT | '_' | '$')*;
QUOTED_IDENTIFIER: '"' ( ~'"' | '""' )* '"';
BACKQUOTED_IDENTIFIER: '`' ( ~'`' | '``' )* '`';

// A hint must come before BLOCK_COMMENT: both match `/*+ ... */` with the same
// length, and the first rule wins.
HINT: '/*+' .*? '*/' -> channel(2);
BLOCK_COMMENT: '/*' .*? '*/' -> skip;
LINE_COMMENT: '--' ~[\r\n]* -> skip;
WS: [ \t\r\n\f\u000B]+ -> skip;

// Anything else becomes a token of its own, so the parser (not the lexer)
// reports it with the usual "syntax error at or near" message.
ERROR_CHAR: .;

fragment EXPONENT: E [+-]? DIGIT+;
fragment DIGIT: [0-9];
fragment LETTER: [a-zA-Z] | [\u0080-\u{10FFFF}];

fragment A: [aA];
fragment B: [bB];
fragment C: [cC];
fragment D: [dD];
fragment E: [eE];
fragment F: [fF];
fragment G: [gG];
fragment H: [hH];
fragment I: [iI];
fragment J: [jJ];
fragment K: [kK];
fragment L: [lL];
fragment M: [mM];
fragment N: [nN];
fragment O: [oO];
fragment P: [pP];
fragment Q: [qQ];
fragment R: [rR];
fragment S: [sS];
fragment T: [tT];
fragment U: [uU];
fragment V: [vV];
fragment W: [wW];
fragment X: [xX];
fragment Y: [yY];
fragment Z: [zZ];
