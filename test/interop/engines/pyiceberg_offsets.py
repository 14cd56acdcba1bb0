"""Checks a topic's table row by row with pyiceberg, without shipping the rows back: reads one JSON command on
stdin, {"catalog": {<pyiceberg REST catalog properties>}, "table": "kafka.events"}, scans kafka.partition,
kafka.offset and value, and prints {"rows": n, "partitions": {p: {"rows", "min", "max", "distinct"}},
"mismatches": m, "example": ...}. A value must be "v-<partition>-<offset>" (what the backfill test produced);
a duplicate shows as rows > distinct, a gap as max - min + 1 > distinct.
"""
import json
import sys

from pyiceberg.catalog import load_catalog


def main():
    cmd = json.load(sys.stdin)
    catalog = load_catalog('floe', **cmd['catalog'])
    table = catalog.load_table(cmd['table'])
    arrow = table.scan(selected_fields=('kafka', 'value')).to_arrow()
    kafka = arrow.column('kafka').combine_chunks()
    partitions = kafka.field('partition').to_pylist()
    offsets = kafka.field('offset').to_pylist()
    values = arrow.column('value').to_pylist()
    seen = {}
    mismatches = 0
    example = None
    for p, o, v in zip(partitions, offsets, values):
        s = seen.setdefault(p, {'rows': 0, 'min': o, 'max': o, 'offsets': set()})
        s['rows'] += 1
        s['min'] = min(s['min'], o)
        s['max'] = max(s['max'], o)
        s['offsets'].add(o)
        want = f'v-{p}-{o}'.encode()
        if v != want:
            mismatches += 1
            if example is None:
                example = {'partition': p, 'offset': o, 'value': None if v is None else v.decode('utf-8', 'replace'), 'want': want.decode()}
    out = {
        'rows': len(offsets),
        'partitions': {str(p): {'rows': s['rows'], 'min': s['min'], 'max': s['max'], 'distinct': len(s['offsets'])} for p, s in sorted(seen.items())},
        'mismatches': mismatches,
        'example': example,
    }
    json.dump(out, sys.stdout)


if __name__ == '__main__':
    main()
