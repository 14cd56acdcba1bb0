// End-to-end fidelity of a tiered topic with transactions (committed, aborted, open across rolls, timed out)
// and a local warehouse: Kafka reads before and after tiering are the same, byte for byte, and the table holds
// only the committed records. See fidelity-transactions.ts for what each step proves.
import { test } from 'node:test';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createFileIO } from '../../../iceberg/io/registry.js';
import { tempDir } from '../../helpers/broker.js';
import { runTxnFidelity } from './fidelity-transactions.js';

test('a tiered transactional topic on a local warehouse reads back as the hot log did, and its table holds only committed records', { timeout: 600_000 }, async (t) => {
  const root = await tempDir('floe-e2e-txn-wh-');
  t.after(() => rm(root, { recursive: true, force: true }));
  const warehouse = join(root, 'wh');
  const io = createFileIO(pathToFileURL(warehouse).href);
  t.after(() => io.close());
  await runTxnFidelity(t, { warehouseFlags: [`--iceberg.warehouse=${warehouse}`], io, pyiceberg: {} });
});
