/** The broker's REST catalog honours iceberg.rest.token: requests without the bearer token get 401. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { startBroker, tempDir } from '../../helpers/broker.js';

test('iceberg.rest.token makes the REST catalog require a bearer token', async (t) => {
  const warehouse = await tempDir('floe-wh-');
  const b = await startBroker(['--remote.log.storage.system.enable=true', `--iceberg.warehouse=${warehouse}`, '--iceberg.rest.port=0', '--iceberg.rest.token=s3cret']);
  t.after(async () => {
    await b.stop();
    await rm(warehouse, { recursive: true, force: true });
  });
  const url = b.broker.services.tiering?.restCatalogUrl;
  assert.ok(url, 'the REST catalog runs');
  const anonymous = await fetch(`${url}/v1/config`);
  assert.equal(anonymous.status, 401);
  const body = (await anonymous.json()) as { error: { type: string; code: number } };
  assert.equal(body.error.code, 401);
  const wrong = await fetch(`${url}/v1/config`, { headers: { authorization: 'Bearer nope' } });
  assert.equal(wrong.status, 401);
  const ok = await fetch(`${url}/v1/config`, { headers: { authorization: 'Bearer s3cret' } });
  assert.equal(ok.status, 200);
});
