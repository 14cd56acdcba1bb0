"""pyiceberg driver for the engine tests (test/interop/engines/pyiceberg.test.ts): reads one JSON command on
stdin, prints one JSON result on stdout.

  {"catalog": {<pyiceberg REST catalog properties>}, "table": "kafka.orders",
   "scans": [{"filter": <expr or null>}, ...]}

answers {"scans": [{"files": [{"path", "partition", "records", "deletes": [paths]}], "rows": [[kafka, value], ...]}]}
where each scan is `table.scan(row_filter=...)`: `files` is what plan_files() planned (so a test can see that a
filter pruned files, not only rows), `rows` what to_arrow() read, sorted by partition and offset.

A scan may also name `"columns": [...]` (top-level columns, e.g. typed ones beside "kafka"): it then reads only
those (`selected_fields`) and its rows are objects keyed by column name instead of [kafka, value] pairs, still
sorted by kafka.partition and kafka.offset when "kafka" is among them.

Expressions: ["==", field, value], [">=", field, value], [">", field, value], ["<", field, value],
["and", expr, expr], with dotted field names such as "kafka.partition". Values: binary as {"b64": ...},
timestamps as {"us": <microseconds since the epoch>}, as spark_driver.py does; decimals as their exact text,
dates as YYYY-MM-DD, maps as lists of [key, value].
"""
import base64
import datetime
import decimal
import json
import sys

from pyiceberg.catalog import load_catalog
from pyiceberg.expressions import AlwaysTrue, And, EqualTo, GreaterThan, GreaterThanOrEqual, LessThan

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
OPS = {'==': EqualTo, '>=': GreaterThanOrEqual, '>': GreaterThan, '<': LessThan}


def expr(e):
    if e is None:
        return AlwaysTrue()
    if e[0] == 'and':
        return And(expr(e[1]), expr(e[2]))
    return OPS[e[0]](e[1], e[2])


def encode(v):
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (bytes, bytearray)):
        return {'b64': base64.b64encode(bytes(v)).decode('ascii')}
    if isinstance(v, datetime.datetime):
        return {'us': (v - EPOCH) // datetime.timedelta(microseconds=1)}
    if isinstance(v, datetime.date):
        return v.isoformat()
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, dict):
        return {k: encode(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [encode(x) for x in v]
    raise TypeError('cannot encode %r' % type(v))


def scan(table, spec):
    columns = spec.get('columns')
    s = table.scan(row_filter=expr(spec.get('filter')), **({'selected_fields': tuple(columns)} if columns else {}))
    files = [{
        'path': t.file.file_path,
        'partition': t.file.partition[0],
        'records': t.file.record_count,
        'deletes': sorted(d.file_path for d in t.delete_files),
    } for t in s.plan_files()]
    rows = s.to_arrow().to_pylist()
    if columns:
        if 'kafka' in columns:
            rows.sort(key=lambda r: (r['kafka']['partition'], r['kafka']['offset']))
        return {'files': sorted(files, key=lambda f: f['path']), 'rows': [{k: encode(x) for k, x in r.items()} for r in rows]}
    rows.sort(key=lambda r: (r['kafka']['partition'], r['kafka']['offset']))
    return {'files': sorted(files, key=lambda f: f['path']), 'rows': [[encode(r['kafka']), encode(r['value'])] for r in rows]}


def main():
    cmd = json.load(sys.stdin)
    table = load_catalog('floe', **cmd['catalog']).load_table(cmd['table'])
    json.dump({'scans': [scan(table, s) for s in cmd['scans']]}, sys.stdout)
    sys.stdout.write('\n')


if __name__ == '__main__':
    main()
