// The same end-to-end fidelity run with the warehouse on S3: s3rver (a real S3-compatible HTTP server, started
// here) behind the broker's S3 settings. Half the random reads of the local run: what differs here is the
// object store, and every path through it (upload, range reads for cold fetch, catalog metadata, the table
// readers) is still exercised from offset 0 and from random offsets. Cold fetches run on read workers here
// (remote.log.reader.threads=2), on the broker's thread in the local run.
import { test } from 'node:test';
import { S3FileIO } from '../../../iceberg/io/s3.js';
import { s3WarehouseFlags, startS3Server } from '../../helpers/s3-server.js';
import { runFidelity } from './fidelity-scenario.js';

test('a tiered topic on an S3 warehouse reads back exactly through every client and as a table', async (t) => {
  const s3 = await startS3Server({ bucket: 'floe-e2e' });
  t.after(() => s3.stop());
  const io = new S3FileIO(s3.fileIOOptions());
  t.after(() => io.close());
  await runFidelity(t, {
    warehouseFlags: [
      ...s3WarehouseFlags(s3),
      // Cold fetches on read workers, which ask the broker's S3 FileIO for every range they read.
      '--remote.log.reader.threads=2',
    ],
    io,
    randomReads: 3,
    seed: 66,
  });
});
