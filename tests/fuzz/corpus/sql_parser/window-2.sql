CREATE SINK tw_final WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
    topic = 'win_tw_final_x1', format = 'json')