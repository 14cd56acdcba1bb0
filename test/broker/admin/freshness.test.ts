// Freshness lag measured from outside and checked against the metrics. kafkajs produces records with a known
// timestamp; the test then polls the table through the REST catalog (rows read by DuckDB from the live data
// files, nothing of Floe's Iceberg code) until the rows are visible, scraping /metrics before and after each
// read. At every point the metrics must agree with what an engine sees:
// - the table holds exactly the offsets up to the committed offset (C before the read <= rows <= C after);
// - the lag in records is the log end minus the rows the table holds;
// - the lag in event time is the scrape's clock minus the oldest waiting record's timestamp (bracketed by the
//   clock read just before and after the scrape), and 0 once the table has caught up.
// No timing thresholds: only consistency between the metric and the table.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { startBroker, tempDir } from '../../helpers/broker.js';
import { tableRows } from '../../helpers/tiered-table.js';
import { partitionValues, scrape } from './scrape.js';

const INTERVAL_MS = 1000;
const DEADLINE_MS = 60_000;

test('the freshness metrics agree with what the REST catalog shows at every point', { timeout: 180_000 }, async (t) => {
  const root = await tempDir('floe-freshness-');
  const cleanups: (() => Promise<unknown>)[] = [];
  t.after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  });
  const warehouse = join(root, 'wh');
  const b = await startBroker(['--remote.log.storage.system.enable=true', `--iceberg.warehouse=${warehouse}`, '--iceberg.rest.port=0', '--iceberg.rest.host=127.0.0.1', `--iceberg.commit.interval.ms=${INTERVAL_MS}`]);
  cleanups.push(() => b.stop());
  const rest = b.broker.services.tiering?.restCatalogUrl;
  const adminUrl = b.adminUrl;
  assert.ok(rest && adminUrl);

  const kafka = new Kafka({ brokers: [b.bootstrap], clientId: 'floe-freshness', logLevel: logLevel.NOTHING });
  const producer = kafka.producer();
  await producer.connect();
  cleanups.push(() => producer.disconnect());

  let logEnd = 0;
  for (const round of [1, 2]) {
    const count = round * 4;
    const produceTs = Date.now();
    await producer.send({ topic: 'fresh', acks: -1, messages: Array.from({ length: count }, (_, i) => ({ key: `r${round}-${i}`, value: `v${i}`, timestamp: String(produceTs) })) });
    const ackedAt = Date.now();
    const firstOffset = logEnd;
    logEnd += count;

    let points = 0;
    let lastLagSeconds = 0;
    const until = Date.now() + DEADLINE_MS;
    for (;;) {
      const before = Date.now();
      const m1 = partitionValues(await scrape(adminUrl), 'fresh', 0);
      const after = Date.now();
      const rows = await tableRows(rest, 'fresh', warehouse);
      // The broker learns that a commit landed a few event-loop turns after the catalog shows it: a scrape in
      // between may still report the previous offset, so the scrape after the read is repeated until then.
      let m2 = partitionValues(await scrape(adminUrl), 'fresh', 0);
      for (let i = 0; i < 50 && (m2.committedOffset ?? -1) + 1 < rows.length; i++) {
        await new Promise((r) => setTimeout(r, 10));
        m2 = partitionValues(await scrape(adminUrl), 'fresh', 0);
      }
      const visibleAt = Date.now();
      points++;

      assert.equal(m1.logEndOffset, logEnd);
      const c1 = m1.committedOffset ?? NaN;
      const c2 = m2.committedOffset ?? NaN;
      assert.ok(c1 <= c2, `the committed offset never goes back (${c1} then ${c2})`);
      assert.deepEqual(rows.map((r) => r.offset), Array.from({ length: rows.length }, (_, i) => i), 'the table holds a prefix of the log, without gaps');
      assert.ok(rows.length >= c1 + 1 && rows.length <= c2 + 1, `the table holds offsets up to ${rows.length - 1}, between the committed offsets reported around the read (${c1}, ${c2})`);
      if (c1 === c2) assert.equal(rows.length, c1 + 1, 'the metric says committed offset C: the table holds exactly the offsets up to C');
      assert.equal(m1.lagRecords, logEnd - (c1 + 1), 'lag in records = log end - rows committed');
      if ((m1.lagRecords ?? 0) > 0) {
        // Every waiting record of this round carries produceTs; earlier rounds are in the table by now.
        assert.ok(c1 + 1 >= firstOffset, 'the earlier round is committed');
        const s = m1.lagSeconds ?? NaN;
        assert.ok(s >= (before - produceTs) / 1000 && s <= (after - produceTs) / 1000, `lag ${s} s is the scrape's clock minus the oldest waiting record's timestamp (${(before - produceTs) / 1000}..${(after - produceTs) / 1000} s)`);
        lastLagSeconds = s;
      } else {
        assert.equal(m1.lagSeconds, 0, 'caught up: no event-time lag');
      }
      if (rows.length === logEnd) {
        assert.equal(m2.lagRecords, 0);
        assert.equal(m2.lagSeconds, 0);
        // Measured from outside: from the acknowledged produce to the rows being visible through the catalog.
        const outside = (visibleAt - produceTs) / 1000;
        assert.ok(lastLagSeconds <= outside, `the last lag reported while waiting (${lastLagSeconds} s) is within the lag seen from outside (${outside} s)`);
        t.diagnostic(`round ${round}: rows visible ${visibleAt - ackedAt} ms after the ack; last reported lag ${Math.round(lastLagSeconds * 1000)} ms; ${points} points checked`);
        break;
      }
      if (Date.now() > until) assert.fail(`the rows did not reach the table within ${DEADLINE_MS} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
});
