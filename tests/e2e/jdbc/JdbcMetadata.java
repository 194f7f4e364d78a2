// What a JDBC tool (DBeaver, a BI tool's schema browser) asks first, through
// the PostgreSQL JDBC driver's DatabaseMetaData, which reads pg_catalog with
// the driver's own queries: getTables, getColumns of a table and of a view,
// getPrimaryKeys and getIndexInfo (a view's key is its primary key), and a
// transaction as a driver runs one (setAutoCommit(false), a query, commit).
//
// Usage: JdbcMetadata URL TABLE VIEW
// Prints one line per fact, which the test checks:
//   TABLE <type>|<schema>|<name>       getTables(null, null, "%", null)
//   COLUMN <table>|<name>|<type name>|<ordinal>|<nullable>
//   PK <table>|<column>|<key seq>|<key name>   getPrimaryKeys of TABLE and VIEW
//   INDEX <table>|<index>|<non unique>|<position>|<column>|<asc or desc>
//                                      getIndexInfo of TABLE and VIEW
//   TX <count>                         the count a query inside the transaction read
// and then "OK"; an exception ends it with a stack trace and exit status 1.
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Properties;

public final class JdbcMetadata {
  public static void main(String[] args) throws Exception {
    if (args.length != 3) {
      System.err.println("usage: JdbcMetadata URL TABLE VIEW");
      System.exit(2);
    }
    final String url = args[0];
    final String table = args[1];
    final String view = args[2];
    Properties props = new Properties();
    props.setProperty("user", "rtsql");
    props.setProperty("connectTimeout", "10");
    props.setProperty("socketTimeout", "60");
    try (Connection c = DriverManager.getConnection(url, props)) {
      DatabaseMetaData md = c.getMetaData();
      try (ResultSet rs = md.getTables(null, null, "%", null)) {
        while (rs.next()) {
          System.out.println("TABLE " + rs.getString("TABLE_TYPE") + "|"
              + rs.getString("TABLE_SCHEM") + "|" + rs.getString("TABLE_NAME"));
        }
      }
      for (String name : new String[] {table, view}) {
        try (ResultSet rs = md.getColumns(null, null, name, "%")) {
          while (rs.next()) {
            System.out.println("COLUMN " + rs.getString("TABLE_NAME") + "|"
                + rs.getString("COLUMN_NAME") + "|" + rs.getString("TYPE_NAME") + "|"
                + rs.getInt("ORDINAL_POSITION") + "|" + rs.getString("IS_NULLABLE"));
          }
        }
      }
      for (String name : new String[] {table, view}) {
        try (ResultSet rs = md.getPrimaryKeys(null, null, name)) {
          while (rs.next()) {
            System.out.println("PK " + rs.getString("TABLE_NAME") + "|"
                + rs.getString("COLUMN_NAME") + "|" + rs.getInt("KEY_SEQ") + "|"
                + rs.getString("PK_NAME"));
          }
        }
      }
      // getIndexInfo's query reads pg_index.indoption[n] & 1 for the order.
      for (String name : new String[] {table, view}) {
        try (ResultSet rs = md.getIndexInfo(null, null, name, false, false)) {
          while (rs.next()) {
            System.out.println("INDEX " + rs.getString("TABLE_NAME") + "|"
                + rs.getString("INDEX_NAME") + "|" + rs.getBoolean("NON_UNIQUE") + "|"
                + rs.getInt("ORDINAL_POSITION") + "|" + rs.getString("COLUMN_NAME") + "|"
                + rs.getString("ASC_OR_DESC"));
          }
        }
      }
      // A driver's transaction: BEGIN goes out before the first statement.
      c.setAutoCommit(false);
      try (Statement st = c.createStatement();
           ResultSet rs = st.executeQuery("SELECT count(*) FROM " + table)) {
        rs.next();
        System.out.println("TX " + rs.getLong(1));
      }
      c.commit();
      c.setAutoCommit(true);
    }
    System.out.println("OK");
  }
}
