// The transactional fidelity run with the warehouse on S3: s3rver (a real S3-compatible HTTP server, started
// here) behind the broker's S3 settings; pyiceberg reads the table through the REST catalog with the same
// S3 endpoint and keys.
import { test } from 'node:test';
import { S3FileIO } from '../../../iceberg/io/s3.js';
import { s3WarehouseFlags, startS3Server } from '../../helpers/s3-server.js';
import { runTxnFidelity } from './fidelity-transactions.js';

test('a tiered transactional topic on an S3 warehouse reads back as the hot log did, and its table holds only committed records', { timeout: 600_000 }, async (t) => {
  const s3 = await startS3Server({ bucket: 'floe-e2e-txn' });
  t.after(() => s3.stop());
  const io = new S3FileIO(s3.fileIOOptions());
  t.after(() => io.close());
  await runTxnFidelity(t, {
    warehouseFlags: s3WarehouseFlags(s3),
    io,
    pyiceberg: {
      's3.endpoint': s3.endpoint,
      's3.path-style-access': 'true',
      's3.region': s3.region,
      's3.access-key-id': s3.credentials.accessKeyId,
      's3.secret-access-key': s3.credentials.secretAccessKey,
    },
  });
});
