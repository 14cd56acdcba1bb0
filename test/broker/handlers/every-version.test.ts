// Every API the broker advertises, at every version it advertises, answers a request filled the way current
// clients fill it (librdkafka 2.16, Apache Kafka's 4.x client): the response encodes at that version (a
// field the version lacks is left out, never a reason to close the connection), decodes with our codec, and
// carries no UNKNOWN_SERVER_ERROR anywhere. One request body per API, written once at its newest version
// and fitted to each older one by dropping the fields that version lacks, as a client's generated code does.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { API_SPECS } from '../../../protocol/messages/index.js';
import { startBroker } from '../../helpers/broker.js';
import { errorCodes, fit, REQUESTS, TOPIC, type Context } from './sample-requests.js';
import { WireClient, type Body } from './wire-client.js';

test('every advertised API answers a current client at every advertised version, with no UNKNOWN_SERVER_ERROR', async (t) => {
  const b = await startBroker();
  t.after(() => b.stop());
  const record = await b.broker.services.topics.createTopic(TOPIC, 1);
  const advertised = b.broker.router.apiVersions().filter((a) => a.apiKey !== 18); // ApiVersions: router.test.ts
  const unknown = advertised.filter((a) => REQUESTS[a.apiKey] === undefined).map((a) => a.apiKey);
  assert.deepEqual(unknown, [], 'every advertised API has a request here; add one for each new handler');

  let client = await WireClient.connect(b.port);
  t.after(() => client.close());
  const failures: string[] = [];
  let checked = 0;
  for (const { apiKey, minVersion, maxVersion } of advertised) {
    const spec = API_SPECS.get(apiKey);
    assert.ok(spec);
    for (let v = minVersion; v <= maxVersion; v++) {
      const where = `${spec.name} v${v}`;
      const body = (REQUESTS[apiKey] as (c: Context) => Body)({ topicId: record.id, version: v });
      try {
        const response = await client.request(apiKey, v, fit(spec.request.fields, v, body));
        for (const [path, code] of errorCodes(response)) if (code === -1) failures.push(`${where}: UNKNOWN_SERVER_ERROR at ${path}`);
        checked++;
      } catch (err) {
        failures.push(`${where}: ${err instanceof Error ? err.message : String(err)}`);
        client.close();
        client = await WireClient.connect(b.port);
      }
    }
  }
  assert.deepEqual(failures, []);
  assert.ok(checked > 100, `${checked} (API, version) pairs answered`);
});
