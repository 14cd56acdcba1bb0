// The README's "Schema registry" curl block, run line by line in its order against a fresh broker (with
// localhost:8081 replaced by the registry's address); each answer must be exactly the one below. The test
// fails if the README's block and these commands differ, so the README shows exactly what is tested.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { startRegistryBroker } from './registry-broker.js';

const run = promisify(execFile);
const CT = "-H 'Content-Type: application/vnd.schemaregistry.v1+json'";
const V1 = String.raw`{\"type\":\"record\",\"name\":\"Order\",\"fields\":[{\"name\":\"id\",\"type\":\"long\"}]}`;
const BAD = String.raw`{\"type\":\"record\",\"name\":\"Order\",\"fields\":[{\"name\":\"id\",\"type\":\"long\"},{\"name\":\"qty\",\"type\":\"int\"}]}`;
const V2 = String.raw`{\"type\":\"record\",\"name\":\"Order\",\"fields\":[{\"name\":\"id\",\"type\":\"long\"},{\"name\":\"qty\",\"type\":\"int\",\"default\":1}]}`;
const V2_TEXT = '{"type":"record","name":"Order","fields":[{"name":"id","type":"long"},{"name":"qty","type":"int","default":1}]}';

/** Each README command with the exact JSON it must print. */
const COMMANDS: [string, unknown][] = [
  [`curl -s -X POST ${CT} --data '{"schema": "${V1}"}' http://localhost:8081/subjects/orders-value/versions`, { id: 1, version: 1, schema: '{"type":"record","name":"Order","fields":[{"name":"id","type":"long"}]}' }],
  [
    `curl -s -X POST ${CT} --data '{"schema": "${BAD}"}' 'http://localhost:8081/compatibility/subjects/orders-value/versions/latest?verbose=true'`,
    { is_compatible: false, messages: ["backward (new schema reading old data): /fields/qty: the reader's field 'qty' has no default value and the writer's record Order has no such field"] },
  ],
  [`curl -s -X POST ${CT} --data '{"schema": "${V2}"}' http://localhost:8081/subjects/orders-value/versions`, { id: 2, version: 2, schema: V2_TEXT }],
  ['curl -s http://localhost:8081/subjects/orders-value/versions', [1, 2]],
  ['curl -s http://localhost:8081/schemas/ids/2/versions', [{ subject: 'orders-value', version: 2 }]],
  [`curl -s -X PUT ${CT} --data '{"compatibility": "FULL"}' http://localhost:8081/config/orders-value`, { compatibility: 'FULL' }],
  ['curl -s http://localhost:8081/subjects/orders-value/versions/3', { error_code: 40402, message: 'Version 3 not found.' }],
];

async function readmeCommands(): Promise<string[]> {
  const readme = await readFile('README.md', 'utf8');
  const section = readme.split(/^## /m).find((s) => s.startsWith('Schema registry'));
  assert.ok(section, 'README.md has no section "Schema registry"');
  const block = /```sh\n([\s\S]*?)```/.exec(section);
  assert.ok(block?.[1], 'the section has no sh block');
  return block[1].split('\n').filter((l) => l.trim() !== '');
}

test("the README's schema registry commands answer as documented", { timeout: 60_000 }, async (t) => {
  assert.deepEqual(await readmeCommands(), COMMANDS.map(([c]) => c), "README's commands and the tested ones differ");
  const broker = await startRegistryBroker();
  t.after(() => broker.stop());
  for (const [command, expected] of COMMANDS) {
    const { stdout } = await run('sh', ['-c', command.replaceAll('http://localhost:8081', broker.registryUrl)]);
    assert.deepEqual(JSON.parse(stdout), expected, command);
  }
});
