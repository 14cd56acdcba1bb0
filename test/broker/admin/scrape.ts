/**
 * Test helpers for the admin port: scrape `/metrics` and parse it with the official Prometheus Python
 * client's parser (Debian's python3-prometheus-client, test/interop/python/prometheus_parse.py), an
 * implementation independent of the prom-client library that wrote the text.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number | null;
}

export interface Family {
  readonly name: string;
  readonly type: string;
  readonly help: string;
  readonly samples: readonly Sample[];
}

const PARSER = fileURLToPath(new URL('../../interop/python/prometheus_parse.py', import.meta.url));
const DEBIAN_PYTHON = '/usr/bin/python3';

export async function scrapeText(adminUrl: string): Promise<{ text: string; contentType: string | null }> {
  const res = await fetch(`${adminUrl}/metrics`);
  if (res.status !== 200) throw new Error(`GET /metrics answered ${res.status}: ${await res.text()}`);
  return { text: await res.text(), contentType: res.headers.get('content-type') };
}

/** Parses exposition text with prometheus_client; rejects with the parser's message when it does not parse. */
export function parsePrometheus(text: string): Promise<Family[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(DEBIAN_PYTHON, [PARSER], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out) as Family[]) : reject(new Error(`prometheus_parse.py exited with ${code}: ${err}`))));
    child.stdin.end(text);
  });
}

/** Scrapes and parses. */
export async function scrape(adminUrl: string): Promise<Family[]> {
  return parsePrometheus((await scrapeText(adminUrl)).text);
}

/** The value of the one sample named `name` whose labels include `labels`; undefined when there is none. */
export function value(families: readonly Family[], name: string, labels: Readonly<Record<string, string>> = {}): number | undefined {
  const matches: Sample[] = [];
  for (const f of families) {
    for (const s of f.samples) {
      if (s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)) matches.push(s);
    }
  }
  if (matches.length > 1) throw new Error(`${matches.length} samples of ${name} match ${JSON.stringify(labels)}; give more labels`);
  const v = matches[0]?.value;
  return v === null ? undefined : v;
}

/** Per-partition values as the metrics report them. */
export function partitionValues(families: readonly Family[], topic: string, partition: number) {
  const l = { topic, partition: String(partition) };
  return {
    logEndOffset: value(families, 'floe_partition_log_end_offset', l),
    highWatermark: value(families, 'floe_partition_high_watermark', l),
    localLogStartOffset: value(families, 'floe_partition_local_log_start_offset', l),
    remoteLogStartOffset: value(families, 'floe_partition_remote_log_start_offset', l),
    committedOffset: value(families, 'floe_partition_table_committed_offset', l),
    lagRecords: value(families, 'floe_partition_freshness_lag_records', l),
    lagSeconds: value(families, 'floe_partition_freshness_lag_seconds', l),
  };
}
