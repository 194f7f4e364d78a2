CREATE TABLE merchants (id BIGINT, name STRING, risk DOUBLE)
WITH (connector = 'file', path = '${srcdir}/data/merchants.csv', format = 'csv', header = 'true')