import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseJson, stringifyJson } from '../../iceberg/json.js';
import { IcebergError } from '../../iceberg/types.js';

test('integers beyond 2^53 become bigint and are written back exactly', () => {
  const text = '{"a":8744736658442914487,"b":-9223372036854775808,"c":9007199254740991,"d":1.5e3,"e":[true,false,null,"x\\u00e9\\n"]}';
  const v = parseJson(text);
  assert.deepEqual(v, { a: 8744736658442914487n, b: -9223372036854775808n, c: 9007199254740991, d: 1500, e: [true, false, null, 'xé\n'] });
  assert.equal(stringifyJson(v), '{"a":8744736658442914487,"b":-9223372036854775808,"c":9007199254740991,"d":1500,"e":[true,false,null,"xé\\n"]}');
});

test('indented output matches JSON.stringify for ordinary values', () => {
  const v = { a: [1, { b: 'c' }, []], d: {}, e: 'q"' };
  assert.equal(stringifyJson(v, 2), JSON.stringify(v, null, 2));
});

test('malformed JSON is rejected with the offset', () => {
  for (const bad of ['{', '{"a":}', '[1,]', '01', '"\\x"', '{"a":1}x', 'tru', '{"a" 1}']) {
    assert.throws(() => parseJson(bad), (e: unknown) => e instanceof IcebergError && e.code === 'INVALID_JSON' && /offset \d+/.test(e.message), bad);
  }
});

test('a "__proto__" key is an ordinary member', () => {
  const v = parseJson('{"__proto__":{"x":1}}') as Record<string, unknown>;
  assert.deepEqual(Object.keys(v), ['__proto__']);
  assert.equal(({} as Record<string, unknown>).x, undefined);
});
