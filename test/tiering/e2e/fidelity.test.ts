// End-to-end fidelity of a tiered topic with the warehouse in a local folder: every client produces, the
// topic is tiered and its local segments deleted, then every client, our own decoder (CRCs), icebird and
// DuckDB read it back exactly. See fidelity-scenario.ts for what each step proves.
import { test } from 'node:test';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createFileIO } from '../../../iceberg/io/registry.js';
import { tempDir } from '../../helpers/broker.js';
import { runFidelity } from './fidelity-scenario.js';

test('a tiered topic on a local warehouse reads back exactly through every client and as a table', async (t) => {
  const root = await tempDir('floe-e2e-wh-');
  t.after(() => rm(root, { recursive: true, force: true }));
  const warehouse = join(root, 'wh');
  const io = createFileIO(pathToFileURL(warehouse).href);
  t.after(() => io.close());
  await runFidelity(t, { warehouseFlags: [`--iceberg.warehouse=${warehouse}`], io, randomReads: 6, seed: 6 });
});
