// The shared secret scan fails when it should: a secret as written or URL-encoded, an empty capture, no
// secrets, a secret too short to look for; and it passes a clean capture without showing the secret.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertNoSecrets } from './secrets.js';

const SECRET = 'p@ss word/Secret-1';

test('assertNoSecrets finds a secret as written and URL-encoded, and names where without showing it', () => {
  assertNoSecrets(['a log line', '{"status":"ok"}'], [SECRET]);
  for (const leak of [`password=${SECRET}`, `GET /x?pw=${encodeURIComponent(SECRET)}`]) {
    assert.throws(
      () => assertNoSecrets(['clean', leak], [SECRET]),
      (e: Error) => {
        assert.match(e.message, /a secret \(p@ss\.\.\.\) appears in/);
        assert.ok(!e.message.includes(SECRET) && !e.message.includes(encodeURIComponent(SECRET)), e.message);
        return true;
      },
    );
  }
});

test('assertNoSecrets cannot pass vacuously', () => {
  assert.throws(() => assertNoSecrets([], [SECRET]), /nothing was captured/);
  assert.throws(() => assertNoSecrets(['', ''], [SECRET]), /nothing was captured/);
  assert.throws(() => assertNoSecrets(['a line'], []), /no secrets/);
  assert.throws(() => assertNoSecrets(['a line'], ['short']), /shorter than 8/);
});
