// Peak memory of converting one closed segment file, as the broker's tiering does it (ConvertCodec reading
// the `.log` file a window at a time), against a baseline measured in the same run: a process that only
// reads the same segment file into memory, which is the least any whole-segment conversion needs. Each
// figure is the peak resident set (VmHWM) of its own fresh process. Segments of several sizes show
// whether conversion memory follows the segment's size (segment.bytes defaults to 1 GiB) or a data file's.
// Run: npx tsx bench/tiering/convert-memory.bench.ts [--mb=128,512] [--codec=none|zstd] [--values=text|json]
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LocalFileIO } from '../../iceberg/io/local.js';
import type { CompressionType } from '../../protocol/record-batch/compression.js';
import { ConvertCodec } from '../../tiering/plugin/convert-codec.js';
import { BenchArgs } from '../lib/args.js';
import { peakRssBytes } from '../lib/proc-stats.js';
import { formatMarkdownTable, progress } from '../lib/table.js';
import { buildSegment, type ValueShape } from './segment.js';

const args = new BenchArgs(process.argv.slice(2), 'usage: convert-memory.bench.ts [--mb=128,512] [--codec=none|zstd] [--values=text|json]');

interface ChildReport {
  readonly maxRssMB: number;
  readonly seconds: number;
  readonly files?: number;
}

const MB = 1e6;
/** This process's peak resident set in MiB (VmHWM, see ../lib/proc-stats.ts). */
function rssMB(): number {
  return peakRssBytes('self') / (1024 * 1024);
}

/** In a child: read the segment whole (baseline) or convert it with the broker's codec; print one JSON line. */
async function child(mode: string, segmentPath: string, dir: string): Promise<void> {
  const t0 = performance.now();
  if (mode === 'read') {
    const bytes = await readFile(segmentPath);
    let sum = 0;
    for (let i = 0; i < bytes.length; i += 4096) sum += bytes[i]!;
    if (sum < 0) throw new Error('unreachable');
    console.log(JSON.stringify({ maxRssMB: rssMB(), seconds: (performance.now() - t0) / 1000 } satisfies ChildReport));
    return;
  }
  const io = new LocalFileIO({ root: dir, fsync: false });
  const codec = new ConvertCodec();
  const r = await codec.convertSegment({ io, tableLocation: `file://${dir}/t`, schema: codec.tableSchema(), specId: 0, partition: 0, baseOffset: 0, lastOffset: 0, segmentPath });
  console.log(JSON.stringify({ maxRssMB: rssMB(), seconds: (performance.now() - t0) / 1000, files: r.dataFiles.length } satisfies ChildReport));
}

function runChild(mode: string, segmentPath: string, dir: string): Promise<ChildReport> {
  const self = fileURLToPath(import.meta.url);
  const argv = [...(self.endsWith('.ts') ? ['--import', 'tsx'] : []), self, `--child=${mode}`, `--segment=${segmentPath}`, `--dir=${dir}`];
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (c: Buffer) => (out += c.toString()));
    p.once('error', reject);
    p.once('exit', (code) => {
      const line = out.trim().split('\n').pop() ?? '';
      if (code !== 0) reject(new Error(`${mode} child exited with ${code}: ${out}`));
      else resolve(JSON.parse(line) as ChildReport);
    });
  });
}

async function main(): Promise<void> {
  const mode = args.string('child', '');
  if (mode !== '') return child(mode, args.string('segment', ''), args.string('dir', ''));
  const sizes = args.string('mb', '128,512').split(',').map(Number);
  if (sizes.some((n) => !(n > 0))) throw new Error('--mb takes positive sizes in MB, comma separated');
  const codec = args.string('codec', 'none') as CompressionType;
  const values = args.string('values', 'text') as ValueShape;
  const dir = await mkdtemp(join(tmpdir(), 'floe-convert-memory-'));
  const rows: (string | number)[][] = [];
  try {
    for (const [i, mb] of sizes.entries()) {
      progress(`[${i + 1}/${sizes.length}] building a ${mb} MB segment (${values} values, ${codec} batches)`);
      const segment = buildSegment(mb, codec, values);
      const path = join(dir, `${i}.log`);
      await writeFile(path, segment);
      const size = segment.length;
      progress(`[${i + 1}/${sizes.length}] reading it whole (baseline) and converting it, each in a fresh process`);
      const read = await runChild('read', path, join(dir, `wh-read-${i}`));
      const conv = await runChild('convert', path, join(dir, `wh-${i}`));
      rows.push([(size / MB).toFixed(0), conv.files ?? 0, read.maxRssMB.toFixed(0), conv.maxRssMB.toFixed(0), (conv.maxRssMB / read.maxRssMB).toFixed(2), (size / MB / conv.seconds).toFixed(0)]);
      await rm(path, { force: true });
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  console.log(`\nconvert-memory: ${values} values, ${codec} producer batches, default codec options (64 MiB data files), Node ${process.version}`);
  console.log(formatMarkdownTable(['segment MB', 'data files', 'peak RSS reading it whole MB (baseline)', 'peak RSS converting MB', 'convert / baseline', 'convert MB/s wall'], rows));
}

await main();
