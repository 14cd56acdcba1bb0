// The storage settings the REST catalog hands engines with every table: enough for Iceberg Java (Spark) and
// pyiceberg to reach an S3-compatible warehouse from the catalog URI alone, nothing for a local warehouse.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readerTableConfig, storageMismatch, warehouseLocation } from '../../../tiering/plugin/open-iceberg-tiering.js';

const NO_S3 = { endpoint: '', region: '', pathStyleAccess: false, accessKeyId: '', secretAccessKey: '' };

test('an S3 warehouse with an endpoint and a region: endpoint, path style, and the region in both readers\' spellings', () => {
  const s3 = { ...NO_S3, endpoint: 'http://127.0.0.1:9000', region: 'eu-west-3', pathStyleAccess: true, accessKeyId: 'K', secretAccessKey: 'S' };
  assert.deepEqual(readerTableConfig(s3), {
    's3.endpoint': 'http://127.0.0.1:9000',
    's3.path-style-access': 'true',
    's3.region': 'eu-west-3',
    'client.region': 'eu-west-3', // Iceberg Java's S3FileIO reads only this one
  });
});

test('the broker\'s S3 keys are never handed out, and nothing is said that was not configured', () => {
  assert.deepEqual(readerTableConfig({ ...NO_S3, accessKeyId: 'K', secretAccessKey: 'S' }), {});
  assert.deepEqual(readerTableConfig(NO_S3), {});
});

test('a folder warehouse becomes an absolute file URL; URLs pass through without a trailing slash', () => {
  assert.equal(warehouseLocation('/tmp/wh/'), 'file:///tmp/wh');
  assert.ok(warehouseLocation('data/wh').startsWith('file:///') && warehouseLocation('data/wh').endsWith('/data/wh'));
  assert.equal(warehouseLocation('s3://lake/wh/'), 's3://lake/wh');
});

test('an external catalog\'s table location must be storage the warehouse FileIO writes', () => {
  assert.equal(storageMismatch('s3://lake/wh', 's3://lake/catalog/kafka/orders'), undefined, 'any bucket of the same S3');
  assert.equal(storageMismatch('s3://lake/wh', 's3a://other/kafka/orders'), undefined, 's3a is S3 too');
  assert.equal(storageMismatch('file:///data/wh', 'file:///data/wh/kafka/orders'), undefined);
  assert.match(storageMismatch('s3://lake/wh', 'gs://bucket/kafka/orders') ?? '', /cannot write gs:\/\/ locations; set iceberg\.warehouse/);
  assert.match(storageMismatch('file:///data/wh', 's3://lake/kafka/orders') ?? '', /cannot write s3:\/\/ locations/);
  assert.match(storageMismatch('file:///data/wh', 'file:///elsewhere/kafka/orders') ?? '', /outside Floe's warehouse file:\/\/\/data\/wh/);
  assert.match(storageMismatch('file:///data/wh', 'file:///data/wh2/orders') ?? '', /outside/);
});
