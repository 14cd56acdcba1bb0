// The status page in headless Chromium (Debian's chromium, driven by playwright-core): a broker with a
// tiered topic and an untiered one, records produced and committed; the page must show every topic's row
// with its lag, draw charts whose data (read from the page's own `window.floeStatus`, not from pixels) has
// points, load uPlot from the broker itself (no request leaves 127.0.0.1), and a PNG screenshot is kept under
// $FLOE_TEST_ARTIFACTS (default <tmpdir>/floe-artifacts). Skipped only when /usr/bin/chromium is absent
// outside CI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { startBroker, tempDir } from '../../helpers/broker.js';

const CHROMIUM = '/usr/bin/chromium';
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 90_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The little of the DOM the page functions use (the test build has no DOM types). */
interface Element {
  getAttribute(name: string): string | null;
  querySelector(selector: string): { textContent: string | null } | null;
}
interface PageGlobals {
  floeStatus?: { series: PageState['series']; refreshed: number };
  uPlot?: unknown;
  document: { querySelectorAll(selector: string): Iterable<Element> };
}

interface PageState {
  rows: { topic: string; lagRecords: string; lagMs: string }[];
  series: Record<string, { x: number[]; y: number[] }>;
  refreshed: number;
  uplot: boolean;
}

test('the status page shows every topic with its lag and charts with data points, in headless Chromium', { timeout: 180_000 }, async (t) => {
  if (!existsSync(CHROMIUM)) {
    if (process.env.CI === 'true') assert.fail(`${CHROMIUM} is missing in CI: .ci/run installs Debian's chromium`);
    t.skip(`${CHROMIUM} is not installed (apt-get install chromium); CI runs this test`);
    return;
  }
  const { chromium } = await import('playwright-core');
  const root = await tempDir('floe-status-page-');
  const cleanups: (() => Promise<unknown>)[] = [];
  t.after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  });
  const b = await startBroker(['--remote.log.storage.system.enable=true', `--iceberg.warehouse=${join(root, 'wh')}`, '--iceberg.rest.port=-1', '--iceberg.commit.interval.ms=500']);
  cleanups.push(() => b.stop());
  const adminUrl = b.adminUrl ?? '';
  const kafka = new Kafka({ brokers: [b.bootstrap], clientId: 'floe-status-page', logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  cleanups.push(() => admin.disconnect());
  await admin.createTopics({ topics: [{ topic: 'orders', numPartitions: 1 }, { topic: 'audit', numPartitions: 1, configEntries: [{ name: 'remote.storage.enable', value: 'false' }, { name: 'iceberg.enabled', value: 'false' }] }] });
  const producer = kafka.producer();
  await producer.connect();
  cleanups.push(() => producer.disconnect());
  await producer.send({ topic: 'orders', messages: Array.from({ length: 50 }, (_, i) => ({ key: `k${i}`, value: `v${i}` })) });
  await producer.send({ topic: 'audit', messages: [{ value: 'a' }] });
  await until('the table to hold the records', async () => {
    const tables = ((await (await fetch(`${adminUrl}/api/tables`)).json()) as { tables: { topic: string; records: number }[] }).tables;
    return tables.find((x) => x.topic === 'orders')?.records === 50 ? true : undefined;
  });

  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] });
  cleanups.push(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const requests: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  await page.goto(adminUrl + '/');
  // The history samples every 10 s. Once the topic has a first point, more records arrive, so a later point
  // has a throughput above 0; wait until both charts of each topic have two points and that one is drawn.
  await until('a first point', async () => {
    const st = (await (await fetch(`${adminUrl}/api/status`)).json()) as { topics: { topic: string; points: unknown[] }[] };
    return (st.topics.find((x) => x.topic === 'orders')?.points.length ?? 0) >= 1 ? true : undefined;
  });
  await producer.send({ topic: 'orders', messages: Array.from({ length: 50 }, (_, i) => ({ key: `k${i}`, value: `w${i}` })) });
  const state = await until('charts with data points', async () => {
    await page.reload();
    await page.waitForFunction(() => ((globalThis as unknown as PageGlobals).floeStatus?.refreshed ?? 0) > 0);
    const s = await page.evaluate((): PageState => {
      const w = globalThis as unknown as PageGlobals;
      const rows = [...w.document.querySelectorAll('#topics tbody tr')].map((tr) => ({
        topic: tr.getAttribute('data-topic') ?? '',
        lagRecords: tr.querySelector('.lag-records')?.textContent ?? '',
        lagMs: tr.querySelector('.lag-ms')?.textContent ?? '',
      }));
      return { rows, series: w.floeStatus?.series ?? {}, refreshed: w.floeStatus?.refreshed ?? 0, uplot: typeof w.uPlot === 'function' };
    });
    const full = ['orders', 'audit'].every((topic) => (s.series[`${topic}:lag`]?.x.length ?? 0) >= 2 && (s.series[`${topic}:throughput`]?.x.length ?? 0) >= 2);
    return full && (s.series['orders:throughput']?.y.some((v) => v > 0) ?? false) ? s : undefined;
  });
  assert.ok(state.uplot, 'uPlot loaded from the broker');
  assert.deepEqual(state.rows.map((r) => r.topic).sort(), ['audit', 'orders'], 'one row per topic');
  const orders = state.rows.find((r) => r.topic === 'orders');
  assert.match(orders?.lagRecords ?? '', /^\d+$/, 'the tiered topic shows its lag in records');
  assert.match(orders?.lagMs ?? '', /^\d+$/, 'and in ms');
  assert.equal(state.rows.find((r) => r.topic === 'audit')?.lagRecords, '–', 'an untiered topic has no table lag');
  const throughput = state.series['orders:throughput'];
  assert.equal(throughput?.x.length, throughput?.y.length, 'one value per time point');
  assert.ok((throughput?.x ?? []).every((x, i, xs) => i === 0 || x > (xs[i - 1] as number)), 'time points in order');
  const canvases = await page.locator('[data-chart] canvas').count();
  assert.ok(canvases >= 4, `${canvases} chart canvases drawn`);
  assert.deepEqual(requests.filter((u) => !u.startsWith(adminUrl)), [], 'the page loads nothing from elsewhere');

  const dir = process.env.FLOE_TEST_ARTIFACTS ?? join(tmpdir(), 'floe-artifacts');
  await mkdir(dir, { recursive: true });
  const file = join(dir, 'status-page.png');
  await page.screenshot({ path: file, fullPage: true });
  const png = await readFile(file);
  assert.ok(png.subarray(0, 8).equals(PNG_SIGNATURE), 'the screenshot is a PNG');
  assert.equal(png.subarray(12, 16).toString('latin1'), 'IHDR');
  assert.ok(png.readUInt32BE(16) > 0 && png.readUInt32BE(20) > 0, 'with a width and height');
  t.diagnostic(`screenshot: ${file}`);
});
