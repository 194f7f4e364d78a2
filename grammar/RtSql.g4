grammar RtSql;
script : EOF ;
WS : [ \t\r\n]+ -> skip ;
