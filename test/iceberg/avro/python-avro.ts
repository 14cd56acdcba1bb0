/**
 * Test helper: parses an Avro container file with the Debian python3-avro reader (an independent
 * implementation) and reports header metadata, records and every schema node lacking an Iceberg id.
 */
import { execFileSync } from 'node:child_process';

const SCRIPT = String.raw`
import sys, json
from avro.datafile import DataFileReader
from avro.io import DatumReader

def conv(v):
    if isinstance(v, bytes): return {'hex': v.hex()}
    if isinstance(v, bool) or v is None: return v
    if isinstance(v, int): return str(v)
    if isinstance(v, dict): return {k: conv(x) for k, x in v.items()}
    if isinstance(v, list): return [conv(x) for x in v]
    if hasattr(v, 'isoformat'): return v.isoformat()
    return v

def check(s, path, out):
    if isinstance(s, list):
        for x in s: check(x, path, out)
        return
    if not isinstance(s, dict): return
    t = s.get('type')
    if t == 'record':
        for f in s['fields']:
            if 'field-id' not in f: out.append(path + '.' + f['name'])
            check(f['type'], path + '.' + f['name'], out)
    elif t == 'array':
        if s.get('logicalType') != 'map' and 'element-id' not in s: out.append(path + '[]')
        check(s['items'], path + '[]', out)
    elif t == 'map':
        if 'key-id' not in s or 'value-id' not in s: out.append(path + '{}')
        check(s['values'], path + '{}', out)
    elif isinstance(t, (dict, list)):
        check(t, path, out)

with open(sys.argv[1], 'rb') as fh:
    r = DataFileReader(fh, DatumReader())
    meta = {k: (v.decode('utf-8') if isinstance(v, bytes) else v) for k, v in r.meta.items()}
    schema = json.loads(meta['avro.schema'])
    records = [conv(x) for x in r]
    r.close()
missing = []
check(schema, '', missing)
print(json.dumps({'meta': meta, 'records': records, 'missingIds': missing}))
`;

export interface PythonAvroResult {
  meta: Record<string, string>;
  /** Records with ints as decimal strings, bytes as `{hex}`, dates and times in ISO form (python-avro applies logical types). */
  records: Record<string, unknown>[];
  missingIds: string[];
}

export function readWithPythonAvro(path: string): PythonAvroResult {
  const out = execFileSync('/usr/bin/python3', ['-c', SCRIPT, path], { encoding: 'utf8' });
  return JSON.parse(out) as PythonAvroResult;
}
