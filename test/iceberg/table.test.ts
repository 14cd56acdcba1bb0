import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalFileIO } from '../../iceberg/io/local.js';
import { WarehouseCatalog } from '../../iceberg/catalog/warehouse.js';
import { tableSuite } from './table-suite.js';

tableSuite('local warehouse', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'floe-table-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const io = new LocalFileIO({ root: dir, fsync: false });
  t.after(() => io.close());
  return { io, catalog: new WarehouseCatalog({ io, warehouse: `file://${dir}/warehouse` }) };
});
