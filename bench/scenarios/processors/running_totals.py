# The processor of the `python_processor` scenario (bench/scenarios/scenario.sh) and of
# bench/micro/python_processor.cpp: a running count and sum of `amount` per partition
# key in one value state, emitted with each row's ts_us (the collector's stamp).
# RETURNS (n BIGINT, total DOUBLE, ts_us BIGINT).
class RunningTotals:
    def init(self, handle):
        self.acc = handle.value_state("acc")

    def handle_input_rows(self, key, rows, timer_values):
        n, total = self.acc.get() or (0, 0.0)
        for row in rows:
            n += 1
            total += row["amount"]
            yield (n, total, row["ts_us"])
        self.acc.update((n, total))
