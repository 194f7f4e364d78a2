// An rtsql session through the PostgreSQL JDBC driver, which speaks only the
// extended query protocol: server-side parameters, a prepared statement run
// past the driver's prepare threshold (it then switches to a named server
// statement and binary results), an error and recovery, and a source, a sink
// and a flow whose SHOW PROGRESS is polled until the expected input arrived,
// typed constant columns, and a live query on the source, also with a row
// limit (setMaxRows).
//
// Usage: JdbcSmoke URL KAFKA_OPTIONS IN_TOPIC OUT_TOPIC SOURCE SINK FLOW EXPECTED_INPUT
// The user is the system property rtsql.user (default rtsql); with
// rtsql.password set, the driver logs in with it (SCRAM-SHA-256). TLS is asked
// for in the URL (ssl=true&sslmode=verify-full&sslrootcert=...).
// Prints "PROGRESS <json>", "LIVE <rows>" and then "OK"; exits 1 with a
// message on a failed check.
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public final class JdbcSmoke {
  private static void check(boolean ok, String what) {
    if (!ok) {
      System.err.println("check failed: " + what);
      System.exit(1);
    }
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 8) {
      System.err.println("usage: JdbcSmoke URL KAFKA_OPTIONS IN OUT SOURCE SINK FLOW EXPECTED");
      System.exit(2);
    }
    final String url = args[0];
    final String kafka = args[1];
    final String inTopic = args[2];
    final String outTopic = args[3];
    final String source = args[4];
    final String sink = args[5];
    final String flow = args[6];
    final int expected = Integer.parseInt(args[7]);

    Properties props = new Properties();
    props.setProperty("user", System.getProperty("rtsql.user", "rtsql"));
    final String password = System.getProperty("rtsql.password");
    if (password != null) props.setProperty("password", password);
    props.setProperty("connectTimeout", "10");
    props.setProperty("socketTimeout", "60");
    try (Connection c = DriverManager.getConnection(url, props)) {
      check(c.getAutoCommit(), "a new connection is in autocommit mode");

      try (Statement st = c.createStatement();
           ResultSet rs = st.executeQuery("SHOW embedded_kafka")) {
        check(rs.next(), "SHOW embedded_kafka returns a row");
        check(rs.getString(1) != null && !rs.getString(1).isEmpty(), "embedded_kafka is set");
      }

      // Seven runs: past the default prepareThreshold of 5.
      try (PreparedStatement ps = c.prepareStatement("SELECT ?::int + 1 AS answer")) {
        for (int i = 0; i < 7; i++) {
          ps.setInt(1, 41 + i);
          try (ResultSet rs = ps.executeQuery()) {
            check(rs.next(), "the answer has a row");
            check(rs.getInt("answer") == 42 + i, "?::int + 1 = " + (42 + i) + ", got "
                + rs.getString(1));
            check(!rs.next(), "one row only");
          }
        }
      }
      try (PreparedStatement ps = c.prepareStatement("SELECT ? || '!' AS shout, ? IS NULL AS n")) {
        ps.setString(1, "it's");
        ps.setNull(2, Types.VARCHAR);
        try (ResultSet rs = ps.executeQuery()) {
          check(rs.next(), "the shout has a row");
          check("it's!".equals(rs.getString("shout")), "string parameter, got "
              + rs.getString("shout"));
          check(rs.getBoolean("n"), "a NULL parameter IS NULL");
        }
      }

      // Constant columns arrive with their own types.
      try (Statement st = c.createStatement();
           ResultSet rs = st.executeQuery(
               "SELECT 1 AS i, 'a' AS s, 1.5 AS d, true AS b, 1.5D AS f")) {
        ResultSetMetaData md = rs.getMetaData();
        check(md.getColumnType(1) == Types.INTEGER, "1 is an integer, got "
            + md.getColumnTypeName(1));
        check(md.getColumnType(2) == Types.VARCHAR, "'a' is text, got " + md.getColumnTypeName(2));
        check(md.getColumnType(3) == Types.NUMERIC, "1.5 is a numeric (a DECIMAL), got "
            + md.getColumnTypeName(3));
        check(md.getColumnType(5) == Types.DOUBLE, "1.5D is a double, got "
            + md.getColumnTypeName(5));
        check(md.getColumnType(4) == Types.BIT || md.getColumnType(4) == Types.BOOLEAN,
            "true is a boolean, got " + md.getColumnTypeName(4));
        check(rs.next(), "the constants have a row");
        check(rs.getInt(1) == 1 && "a".equals(rs.getString(2))
            && new java.math.BigDecimal("1.5").equals(rs.getBigDecimal(3))
            && rs.getBoolean(4) && rs.getDouble(5) == 1.5, "constant values");
      }

      try (Statement st = c.createStatement()) {
        try {
          st.executeQuery("SELEC 1");
          check(false, "a syntax error raises SQLException");
        } catch (SQLException e) {
          check("42601".equals(e.getSQLState()), "syntax error SQLSTATE, got " + e.getSQLState());
        }

        st.execute("CREATE SOURCE " + source + " (user_id STRING, amount DOUBLE) WITH ("
            + kafka + ", subscribe = '" + inTopic + "', startingOffsets = 'earliest', "
            + "format = 'json')");
        st.execute("CREATE SINK " + sink + " WITH (" + kafka + ", topic = '" + outTopic
            + "', format = 'json')");
        st.execute("CREATE FLOW " + flow + " INTO " + sink + " TRIGGER REALTIME AS SELECT "
            + "user_id, amount * 2 AS doubled FROM " + source + " WHERE amount > 10");
      }

      Pattern inputRows = Pattern.compile("\"numInputRows\"\\s*:\\s*(\\d+)");
      String progress = null;
      long deadline = System.nanoTime() + 30_000_000_000L;
      try (PreparedStatement ps = c.prepareStatement("SHOW PROGRESS " + flow)) {
        while (System.nanoTime() < deadline) {
          try (ResultSet rs = ps.executeQuery()) {
            check(rs.next(), "SHOW PROGRESS returns a row");
            progress = rs.getString(1);
          }
          Matcher m = inputRows.matcher(progress);
          if (m.find() && Integer.parseInt(m.group(1)) >= expected) break;
          Thread.sleep(300);
        }
      }
      check(progress != null, "SHOW PROGRESS answered");
      System.out.println("PROGRESS " + progress);

      // A live query: a temporary flow on the source whose rows stream to
      // this connection; LIMIT ends it.
      int live = 0;
      try (Statement st = c.createStatement();
           ResultSet rs = st.executeQuery("SELECT user_id, amount FROM " + source
               + " WHERE amount > 10 LIMIT 5")) {
        ResultSetMetaData md = rs.getMetaData();
        check(md.getColumnType(2) == Types.DOUBLE, "amount is a double, got "
            + md.getColumnTypeName(2));
        while (rs.next()) {
          check(rs.getDouble("amount") > 10, "the live query's filter holds");
          check(rs.getString("user_id") != null, "user_id is set");
          live++;
        }
      }
      check(live == 5, "the live query returned LIMIT rows, got " + live);
      System.out.println("LIVE " + live);

      // A row limit on a live query without LIMIT: the driver's Execute asks
      // for two rows, the portal is suspended after them, and the Sync that
      // follows ends the query; the session then goes on.
      int limited = 0;
      try (Statement st = c.createStatement()) {
        st.setMaxRows(2);
        try (ResultSet rs = st.executeQuery("SELECT user_id, amount FROM " + source
            + " WHERE amount > 10")) {
          while (rs.next()) limited++;
        }
      }
      check(limited == 2, "setMaxRows(2) on a live query returned 2 rows, got " + limited);
      try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT 7")) {
        check(rs.next() && rs.getInt(1) == 7, "the session goes on after a row-limited live query");
      }
      System.out.println("MAXROWS " + limited);
    }
    System.out.println("OK");
  }
}
