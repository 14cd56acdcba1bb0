// ClientQuotas over the real embedded metadata store, with a fake clock: who shares a rate (a user quota
// across its clients, a default entity per user), changes apply to the next request, and the stored
// quotas come back when the store is opened again.
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { test } from 'node:test';
import { EmbeddedMetadataStore } from '../../../broker/metadata/embedded-metadata-store.js';
import { ClientQuotas } from '../../../broker/quotas/client-quotas.js';
import { tempDir } from '../../helpers/broker.js';

const WINDOWS = { samples: 11, windowMs: 1000 };

test('rates are shared as Kafka shares them, quota changes apply at once, and quotas are durable', async (t) => {
  const dir = await tempDir();
  let store = await EmbeddedMetadataStore.open(dir);
  t.after(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });
  let now = 0;
  const quotas = new ClientQuotas(store, WINDOWS, () => now);
  assert.equal(quotas.active('produce'), false);
  assert.equal(quotas.record('produce', 'User:alice', 'a', 1e9), 0, 'no quota, no throttle');

  await quotas.alter([
    { entity: [{ entityType: 'user', entityName: 'alice' }], values: { producer_byte_rate: 1000 } },
    { entity: [{ entityType: 'user', entityName: null }], values: { producer_byte_rate: 1000 } },
  ]);
  assert.equal(quotas.active('produce'), true);
  assert.equal(quotas.active('fetch'), false);
  // alice's quota is on the user: her two clients share one rate (10 s of 1000 B/s fill it).
  assert.equal(quotas.record('produce', 'User:alice', 'a', 6000), 0);
  assert.ok(quotas.record('produce', 'User:alice', 'b', 6000) > 0, 'the second client of the same user is over the shared quota');
  // The default user entity gives every other user a rate of its own.
  assert.equal(quotas.record('produce', 'User:bob', 'a', 9000), 0);
  assert.equal(quotas.record('produce', 'User:carol', 'a', 9000), 0);
  assert.ok(quotas.record('produce', 'User:bob', 'a', 2000) > 0);
  assert.deepEqual(quotas.throttled.produce.requests, 2);
  // Fetch has its own key and rate: no consumer_byte_rate is set.
  assert.equal(quotas.record('fetch', 'User:alice', 'a', 1e9), 0);

  // Raising alice's quota applies to her next request; removing every value removes the entity.
  await quotas.alter([{ entity: [{ entityType: 'user', entityName: 'alice' }], values: { producer_byte_rate: 1e6 } }]);
  assert.equal(quotas.record('produce', 'User:alice', 'a', 1), 0);
  assert.equal(quotas.maxBytesInWindow('produce', 'User:alice', 'a', WINDOWS), 1e7);
  await quotas.alter([{ entity: [{ entityType: 'user', entityName: null }], values: {} }]);
  now = 20_000;
  assert.equal(quotas.record('produce', 'User:bob', 'a', 1e9), 0, 'bob has no quota any more');

  await store.close();
  store = await EmbeddedMetadataStore.open(dir);
  assert.deepEqual(store.listClientQuotas(), [{ entity: [{ entityType: 'user', entityName: 'alice' }], values: { producer_byte_rate: 1e6 } }]);
});
