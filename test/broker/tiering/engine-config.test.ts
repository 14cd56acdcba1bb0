// The storage settings the REST catalog hands engines with every table: enough for Iceberg Java (Spark) and
// pyiceberg to reach an S3-compatible warehouse from the catalog URI alone, nothing for a local warehouse.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../../broker/config/config.js';
import type { BrokerConfig } from '../../../broker/config/settings.js';
import { engineStorageConfig } from '../../../broker/tiering/broker-tiering.js';

function config(argv: string[]): BrokerConfig {
  const loaded = loadConfig({ argv, env: {} });
  assert.ok(!loaded.help);
  return loaded.config;
}

test('an S3 warehouse with an endpoint and a region: endpoint, path style, and the region in both readers\' spellings', () => {
  const c = config(['--iceberg.warehouse=s3://lake/wh', '--iceberg.s3.endpoint=http://127.0.0.1:9000', '--iceberg.s3.region=eu-west-3', '--iceberg.s3.access.key.id=K', '--iceberg.s3.secret.access.key=S']);
  assert.deepEqual(engineStorageConfig(c), {
    's3.endpoint': 'http://127.0.0.1:9000',
    's3.path-style-access': 'true',
    's3.region': 'eu-west-3',
    'client.region': 'eu-west-3', // Iceberg Java's S3FileIO reads only this one
  });
});

test('the broker\'s S3 keys are never handed out, and nothing is said that was not configured', () => {
  const c = config(['--iceberg.warehouse=s3://lake/wh', '--iceberg.s3.access.key.id=K', '--iceberg.s3.secret.access.key=S']);
  assert.deepEqual(engineStorageConfig(c), {});
  assert.deepEqual(engineStorageConfig(config(['--iceberg.warehouse=/tmp/wh'])), {});
});
