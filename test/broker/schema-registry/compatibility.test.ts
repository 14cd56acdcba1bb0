// Levels over a format's reader/writer check: which earlier versions are checked, and in which direction.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkCompatibility } from '../../../broker/schema-registry/compatibility.js';
import { AVRO_FORMAT } from '../../../broker/schema-registry/formats/avro.js';
import { COMPATIBILITY_LEVELS } from '../../../broker/schema-registry/model.js';

const avro = (fields: unknown[]) => AVRO_FORMAT.parse(JSON.stringify({ type: 'record', name: 'R', fields }), []);

test('each level checks the right versions in the right direction', () => {
  const v1 = avro([{ name: 'a', type: 'int' }]);
  const v2 = avro([]);
  const addNoDefault = avro([{ name: 'b', type: 'int' }]); // new readers fail on old data; old readers are fine...
  const expected: Record<string, boolean> = { NONE: true, BACKWARD: false, BACKWARD_TRANSITIVE: false, FORWARD: true, FORWARD_TRANSITIVE: false, FULL: false, FULL_TRANSITIVE: false };
  for (const level of COMPATIBILITY_LEVELS) {
    assert.equal(checkCompatibility(AVRO_FORMAT, level, addNoDefault, [v1, v2]).compatible, expected[level], level);
  }
  assert.deepEqual(checkCompatibility(AVRO_FORMAT, 'FULL_TRANSITIVE', v1, []), { compatible: true, messages: [] }, 'nothing to check against');
  const r = checkCompatibility(AVRO_FORMAT, 'FULL', addNoDefault, [v2]);
  assert.ok(r.messages.every((m) => m.startsWith('backward')), 'messages say which direction failed');
});
