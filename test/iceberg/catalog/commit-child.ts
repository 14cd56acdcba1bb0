/**
 * Child process for the cross-process commit race in warehouse.test.ts: opens its own LocalFileIO and
 * WarehouseCatalog on the warehouse given as argv, commits `count` appends of one row each (row values
 * `first`, `first+1`, ...), and exits 0 when all landed.
 */
import * as arrow from 'apache-arrow';
import { LocalFileIO } from '../../../iceberg/io/local.js';
import { WarehouseCatalog } from '../../../iceberg/catalog/warehouse.js';
import { Table } from '../../../iceberg/table.js';

const [root, warehouse, firstArg, countArg] = process.argv.slice(2);
if (root === undefined || warehouse === undefined || firstArg === undefined || countArg === undefined) {
  throw new Error('usage: commit-child <root> <warehouse> <first> <count>');
}
const io = new LocalFileIO({ root, fsync: false });
const catalog = new WarehouseCatalog({ io, warehouse });
const first = Number(firstArg);
await Promise.all(
  Array.from({ length: Number(countArg) }, async (_, i) => {
    const table = await Table.load(catalog, { namespace: ['db'], name: 'shared' }, io);
    const file = await table.writeDataFile(new arrow.Table({ n: arrow.makeVector(BigInt64Array.of(BigInt(first + i))) }));
    await table.commit(table.newAppend().addFile(file), { baseDelayMs: 2, maxDelayMs: 50 });
  }),
);
await io.close();
