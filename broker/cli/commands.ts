/**
 * The `floe` admin commands. Each talks to a running broker's admin API over HTTP (admin-client.ts) and
 * prints a human-readable answer, or the API's JSON with `--json`. Every command has `--help`.
 */
import { AdminClient, CliError, DEFAULT_ADMIN_URL, EXIT } from './admin-client.js';
import { intOption, parseArgs, requiredInt, type OptionSpec, type ParsedArgs } from './args.js';
import { Progress } from './progress.js';

export interface CliIO {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** Whether stderr is a terminal (progress lines are drawn only then). */
  readonly tty: boolean;
  readonly env: Readonly<Record<string, string | undefined>>;
}

interface Context {
  readonly client: AdminClient;
  readonly io: CliIO;
  readonly json: boolean;
  readonly usage: string;
}

interface Command {
  /** The words naming it: ['table', 'status']. */
  readonly words: readonly string[];
  /** Positional arguments, for the usage line. */
  readonly args: string;
  readonly summary: string;
  readonly details?: string;
  readonly options?: Readonly<Record<string, OptionSpec & { help: string }>>;
  /** Positional arguments: [min, max]. */
  readonly positionals: readonly [number, number];
  run(args: ParsedArgs, ctx: Context): Promise<void>;
}

const COMMON: Readonly<Record<string, OptionSpec & { help: string }>> = {
  'admin-url': { value: true, help: `the broker's admin port (default $FLOE_ADMIN_URL or ${DEFAULT_ADMIN_URL})` },
  json: { value: false, help: 'print the admin API\'s JSON answer instead of text' },
  help: { value: false, help: 'show this help' },
};

export const EXIT_CODES_HELP = `Exit codes: 0 ok, 1 the operation failed or was refused, 2 bad arguments, 3 broker unreachable, 4 not found.`;

interface TopicJson {
  name: string;
  tiered: boolean;
  lagRecords: number;
  lagMs: number;
  partitions: { partition: number; logEndOffset: number; localLogStartOffset: number; remoteLogStartOffset?: number; committedOffset?: number; lagRecords?: number; lagMs?: number }[];
}
interface TableJson {
  topic: string;
  table: string;
  records: number;
  dataFiles: number;
  dataFileBytes: number;
  deleteFiles: number;
  snapshots: number;
  manifests: number;
  lastCommitMs: number;
  lagRecords: number;
  lagMs: number;
}
interface SnapshotJson {
  snapshotId: string;
  timestampMs: number;
  operation: string;
  current: boolean;
  committedOffsets: Record<string, number>;
}
interface QualityJson {
  recordsPerMinute: number;
  recordsPerMinuteBaseline?: number;
  rateFlag: boolean;
  nullKeyShare?: number;
  nullKeyShareBaseline?: number;
  nullValueShare?: number;
  nullValueShareBaseline?: number;
  nullKeyFlag: boolean;
  nullValueFlag: boolean;
}
interface BacklogJson {
  topic: string;
  table: string;
  segments: number;
  bytes: number;
  progress?: { percent: number; doneBytes: number; totalBytes: number; bytesPerSecond: number; etaSeconds: number | null; elapsedSeconds: number };
}

function backlogLine(b: BacklogJson): string {
  const mib = (n: number) => `${(n / 1048576).toFixed(1)} MiB`;
  const p = b.progress;
  const head = `${b.segments} closed segments (${mib(b.bytes)}) not in the table yet`;
  if (p === undefined) return head;
  return `${head}; ${p.percent.toFixed(1)}% of ${mib(p.totalBytes)} done at ${mib(p.bytesPerSecond)}/s, ETA ${p.etaSeconds === null ? '?' : `${Math.ceil(p.etaSeconds)} s`}`;
}

type CompactJson = { partition: number; status: string; reason?: string; inputFiles?: number; outputFiles?: number; bytesRead?: number };

const enc = encodeURIComponent;

export const COMMANDS: readonly Command[] = [
  {
    words: ['topics'],
    args: '',
    summary: 'list topics with their partitions and table freshness lag',
    positionals: [0, 0],
    async run(_a, ctx) {
      const r = await ctx.client.get<{ topics: TopicJson[] }>('/api/topics');
      if (ctx.json) return printJson(ctx, r);
      printTable(ctx, ['topic', 'partitions', 'tiered', 'lag records', 'lag ms'], r.topics.map((t) => [t.name, String(t.partitions.length), t.tiered ? 'yes' : 'no', t.tiered ? String(t.lagRecords) : '-', t.tiered ? String(t.lagMs) : '-']));
    },
  },
  {
    words: ['tables'],
    args: '',
    summary: 'list the tables of tiered topics: rows, files, snapshots, last commit, lag',
    positionals: [0, 0],
    async run(_a, ctx) {
      const r = await ctx.client.get<{ tables: TableJson[] }>('/api/tables');
      if (ctx.json) return printJson(ctx, r);
      printTable(
        ctx,
        ['table', 'topic', 'records', 'data files', 'delete files', 'snapshots', 'last commit', 'lag records', 'lag ms'],
        r.tables.map((t) => [t.table, t.topic, String(t.records), String(t.dataFiles), String(t.deleteFiles), String(t.snapshots), when(t.lastCommitMs), String(t.lagRecords), String(t.lagMs)]),
      );
    },
  },
  {
    words: ['table', 'status'],
    args: '<table>',
    summary: 'one table: files, snapshots, partitions with offsets and lag, data-quality signals',
    details: '<table> is namespace.name (kafka.orders) or the topic name.',
    positionals: [1, 1],
    async run(a, ctx) {
      const name = a.positionals[0] as string;
      const r = await ctx.client.get<TableJson & { partitions: TopicJson['partitions']; snapshots: SnapshotJson[]; quality: QualityJson }>(`/api/tables/${enc(name)}`);
      if (ctx.json) return printJson(ctx, r);
      const q = r.quality;
      const flag = (f: boolean) => (f ? ' FLAGGED' : '');
      const lines = [
        `table ${r.table} (topic ${r.topic})`,
        `  records ${r.records} in ${r.dataFiles} data files (${r.dataFileBytes} bytes), ${r.deleteFiles} delete files, ${r.manifests} manifests`,
        `  ${r.snapshots} snapshots, last commit ${when(r.lastCommitMs)}; freshness lag ${r.lagRecords} records, ${r.lagMs} ms`,
        `  quality: ${Math.round(q.recordsPerMinute)} records/min (hour median ${num(q.recordsPerMinuteBaseline)})${flag(q.rateFlag)}; null keys ${pct(q.nullKeyShare)} (hour ${pct(q.nullKeyShareBaseline)})${flag(q.nullKeyFlag)}; null values ${pct(q.nullValueShare)} (hour ${pct(q.nullValueShareBaseline)})${flag(q.nullValueFlag)}`,
        '',
      ];
      ctx.io.stdout(lines.join('\n') + '\n');
      printTable(ctx, ['partition', 'log end', 'local start', 'remote start', 'committed', 'lag records', 'lag ms'], r.partitions.map((p) => [String(p.partition), String(p.logEndOffset), String(p.localLogStartOffset), p.remoteLogStartOffset === undefined ? '-' : String(p.remoteLogStartOffset), String(p.committedOffset ?? '-'), String(p.lagRecords ?? '-'), String(p.lagMs ?? '-')]));
      ctx.io.stdout('\n');
      printTable(ctx, ['snapshot', 'committed at', 'operation', 'offsets (partition:committed)', ''], r.snapshots.map((s) => [s.snapshotId, when(s.timestampMs), s.operation, Object.entries(s.committedOffsets).map(([p, o]) => `${p}:${o}`).join(' '), s.current ? 'current' : '']));
    },
  },
  {
    words: ['table', 'compact'],
    args: '<table>',
    summary: 'merge the small data files of a table now, partition by partition',
    details: 'Compaction keeps the offset index in the same commit, so Kafka fetches are unaffected.',
    positionals: [1, 1],
    options: {
      partition: { value: true, help: 'only this partition' },
      'min-input-files': { value: true, help: 'merge runs of at least this many small files (default: the topic\'s iceberg.compaction.min.input.files)' },
      'target-file-size-bytes': { value: true, help: 'size merged files aim at (default: the topic\'s setting)' },
    },
    async run(a, ctx) {
      const name = a.positionals[0] as string;
      const only = intOption(a, 'partition', ctx.usage);
      const minInputFiles = intOption(a, 'min-input-files', ctx.usage);
      const targetFileSizeBytes = intOption(a, 'target-file-size-bytes', ctx.usage);
      const detail = await ctx.client.get<{ table: string; partitions: { partition: number }[] }>(`/api/tables/${enc(name)}`);
      const partitions = only === undefined ? detail.partitions.map((p) => p.partition) : [only];
      const progress = new Progress(ctx.io, `compacting ${detail.table}`, partitions.length, 'partitions');
      const results: CompactJson[] = [];
      let bytes = 0;
      for (const p of partitions) {
        const r = await ctx.client.post<{ results: CompactJson[] }>(`/api/tables/${enc(name)}/compact`, { partition: p, ...(minInputFiles === undefined ? {} : { minInputFiles }), ...(targetFileSizeBytes === undefined ? {} : { targetFileSizeBytes }) });
        results.push(...r.results);
        for (const x of r.results) bytes += x.bytesRead ?? 0;
        progress.tick(bytes);
      }
      progress.done();
      if (ctx.json) return printJson(ctx, { table: detail.table, results });
      const compacted = results.filter((r) => r.status === 'compacted');
      const inputs = compacted.reduce((n, r) => n + (r.inputFiles ?? 0), 0);
      const outputs = compacted.reduce((n, r) => n + (r.outputFiles ?? 0), 0);
      for (const r of results) if (r.status !== 'compacted' && r.reason !== undefined) ctx.io.stdout(`partition ${r.partition}: ${r.status}: ${r.reason}\n`);
      ctx.io.stdout(`compacted ${compacted.length} of ${results.length} partitions of ${detail.table}: ${inputs} files into ${outputs}, ${bytes} bytes read in ${progress.seconds().toFixed(1)} s\n`);
    },
  },
  {
    words: ['table', 'backfill'],
    args: '<table>',
    summary: 'follow a table catching up with its topic (a backfill after tables were turned on) until it holds every closed segment',
    details: 'Tables turned on for a topic with history convert its closed segments oldest first; remote.log.manager.copy.max.bytes.per.second throttles it. A restart resumes where the table stands.',
    positionals: [1, 1],
    options: {
      'no-wait': { value: false, help: 'print where the backlog stands and return' },
      'interval-ms': { value: true, help: 'how often to ask the broker (default 1000)' },
    },
    async run(a, ctx) {
      const name = a.positionals[0] as string;
      const intervalMs = intOption(a, 'interval-ms', ctx.usage) ?? 1000;
      const read = () => ctx.client.get<BacklogJson>(`/api/tables/${enc(name)}/backlog`);
      let b = await read();
      if (a.flags.has('no-wait') || b.segments === 0) {
        if (ctx.json) return printJson(ctx, b);
        ctx.io.stdout(b.segments === 0 ? `table ${b.table}: holds every closed segment of ${b.topic}\n` : `table ${b.table}: ${backlogLine(b)}\n`);
        return;
      }
      const first = b;
      const started = performance.now();
      const total = first.segments;
      const progress = new Progress(ctx.io, `backfilling ${b.table}`, total, 'segments');
      while (b.segments > 0) {
        await new Promise((r) => setTimeout(r, intervalMs));
        b = await read();
        progress.set(total - b.segments, Math.max(0, first.bytes - b.bytes));
      }
      progress.done();
      const seconds = (performance.now() - started) / 1000;
      const summary = { table: b.table, topic: b.topic, segments: first.segments, bytes: first.bytes, seconds };
      if (ctx.json) return printJson(ctx, summary);
      ctx.io.stdout(`table ${b.table}: holds every closed segment of ${b.topic}; ${first.segments} segments (${(first.bytes / 1048576).toFixed(1)} MiB) were waiting, done in ${seconds.toFixed(1)} s\n`);
    },
  },
  {
    words: ['table', 'expire'],
    args: '<table>',
    summary: 'expire old snapshots now and delete the files only they needed',
    details: 'Uses the table\'s history.expire.* properties; the snapshots naming the current offset index are kept.',
    positionals: [1, 1],
    async run(a, ctx) {
      const name = a.positionals[0] as string;
      const r = await ctx.client.post<{ topic: string; expiredSnapshots: number; deletedFiles: number; deferredFiles: number; orphansDeleted: number }>(`/api/tables/${enc(name)}/expire`);
      if (ctx.json) return printJson(ctx, r);
      ctx.io.stdout(`expired ${r.expiredSnapshots} snapshots of ${name}: ${r.deletedFiles} files deleted, ${r.deferredFiles} left for the next run (in use), ${r.orphansDeleted} orphans removed\n`);
    },
  },
  {
    words: ['table', 'hide'],
    args: '<table>',
    summary: 'hide offsets A..B of a partition from table readers (Kafka consumers still read them)',
    details: 'Writes position deletes over those rows, kept across compaction and expiry. The range is inclusive.',
    positionals: [1, 1],
    options: {
      partition: { value: true, help: 'the Kafka partition (required)' },
      'from-offset': { value: true, help: 'first offset to hide (required)' },
      'to-offset': { value: true, help: 'last offset to hide, inclusive (required)' },
    },
    async run(a, ctx) {
      const name = a.positionals[0] as string;
      const partition = requiredInt(a, 'partition', ctx.usage);
      const fromOffset = requiredInt(a, 'from-offset', ctx.usage);
      const toOffset = requiredInt(a, 'to-offset', ctx.usage);
      if (toOffset < fromOffset) throw new CliError(EXIT.USAGE, `--to-offset ${toOffset} is below --from-offset ${fromOffset}\n${ctx.usage}`);
      const r = await ctx.client.post<{ rowsHidden: number; deleteFiles: number }>(`/api/tables/${enc(name)}/hide`, { partition, fromOffset, toOffset });
      if (ctx.json) return printJson(ctx, r);
      ctx.io.stdout(`hid ${r.rowsHidden} rows of ${name} partition ${partition}, offsets ${fromOffset}..${toOffset} (${r.deleteFiles} delete files); Kafka consumers still read them\n`);
    },
  },
  {
    words: ['table', 'rebuild'],
    args: '<table>',
    summary: 'convert a range of the table again from the stored Kafka bytes (after a schema or mapping fix)',
    details: 'Every segment holding offsets from --from-offset on is converted again with the topic\'s typing as it is now (a schema registered or fixed since), in one commit per partition. Kafka consumers read the same bytes before and after. Segments with hidden rows are left as they are.',
    positionals: [1, 1],
    options: {
      'from-offset': { value: true, help: 'first offset to rebuild (required)' },
      partition: { value: true, help: 'only this partition (default: every partition)' },
    },
    async run(a, ctx) {
      const name = a.positionals[0] as string;
      const fromOffset = requiredInt(a, 'from-offset', ctx.usage);
      const partition = intOption(a, 'partition', ctx.usage);
      const r = await ctx.client.post<{ results: { partition: number; status: string; inputSegments?: number; reason?: string }[] }>(`/api/tables/${enc(name)}/rebuild`, { fromOffset, ...(partition === undefined ? {} : { partition }) });
      if (ctx.json) return printJson(ctx, r);
      for (const x of r.results) if (x.status !== 'compacted' && x.reason !== undefined) ctx.io.stdout(`partition ${x.partition}: ${x.status}: ${x.reason}\n`);
      const segments = r.results.reduce((n, x) => n + (x.status === 'compacted' ? (x.inputSegments ?? 0) : 0), 0);
      ctx.io.stdout(`rebuilt ${segments} segments of ${name} from offset ${fromOffset} (${r.results.length} partitions); Kafka consumers read the same bytes\n`);
    },
  },
  {
    words: ['table', 'rollback'],
    args: '<table>',
    summary: 'make the table show what a snapshot showed, only when Kafka loses nothing',
    details: 'Allowed only to a snapshot with the same offset index as now (it undoes hides); otherwise refused (exit 1) with the offsets it would take from Kafka consumers. floe table status lists the snapshots.',
    positionals: [1, 1],
    options: { 'to-snapshot': { value: true, help: 'the snapshot id (required)' } },
    async run(a, ctx) {
      const name = a.positionals[0] as string;
      const snapshotId = a.options.get('to-snapshot')?.[0];
      if (snapshotId === undefined || !/^-?\d+$/.test(snapshotId)) throw new CliError(EXIT.USAGE, `--to-snapshot needs a snapshot id (digits)\n${ctx.usage}`);
      const r = await ctx.client.post<{ partitionsChanged: number }>(`/api/tables/${enc(name)}/rollback`, { snapshotId });
      if (ctx.json) return printJson(ctx, r);
      ctx.io.stdout(r.partitionsChanged === 0 ? `${name} already shows what snapshot ${snapshotId} showed; nothing changed\n` : `rolled ${name} back to snapshot ${snapshotId} (${r.partitionsChanged} partitions changed, as a new snapshot)\n`);
    },
  },
  {
    words: ['config', 'get'],
    args: '<topic> [key]',
    summary: 'show a topic\'s effective configs (or one) and where each comes from',
    positionals: [1, 2],
    async run(a, ctx) {
      const [topic, key] = a.positionals as [string, string | undefined];
      const r = await ctx.client.get<{ configs: Record<string, { value: string; source: string }> }>(`/api/configs/topics/${enc(topic)}`);
      if (key !== undefined) {
        const c = r.configs[key];
        if (c === undefined) throw new CliError(EXIT.NOT_FOUND, `topic ${topic} has no config ${key}; floe config get ${topic} lists them`);
        if (ctx.json) return printJson(ctx, { [key]: c });
        ctx.io.stdout(c.value + '\n');
        return;
      }
      if (ctx.json) return printJson(ctx, r);
      printTable(ctx, ['config', 'value', 'source'], Object.entries(r.configs).map(([k, c]) => [k, c.value, c.source]));
    },
  },
  {
    words: ['config', 'set'],
    args: '<topic> key=value...',
    summary: 'set (or with --delete remove) topic config overrides, validated as Kafka\'s IncrementalAlterConfigs',
    positionals: [1, Infinity],
    options: {
      delete: { value: true, repeat: true, help: 'remove this override (repeatable)' },
      'validate-only': { value: false, help: 'check the change without applying it' },
    },
    async run(a, ctx) {
      const [topic, ...pairs] = a.positionals as [string, ...string[]];
      const set: Record<string, string> = {};
      for (const p of pairs) {
        const eq = p.indexOf('=');
        if (eq <= 0) throw new CliError(EXIT.USAGE, `'${p}' is not key=value\n${ctx.usage}`);
        set[p.slice(0, eq)] = p.slice(eq + 1);
      }
      const del = a.options.get('delete') ?? [];
      if (pairs.length === 0 && del.length === 0) throw new CliError(EXIT.USAGE, `give at least one key=value or --delete key\n${ctx.usage}`);
      const validateOnly = a.flags.has('validate-only');
      const r = await ctx.client.put<{ configs: Record<string, { value: string; source: string }> }>(`/api/configs/topics/${enc(topic)}`, { set, delete: del, validateOnly });
      if (ctx.json) return printJson(ctx, r);
      const changed = [...Object.keys(set), ...del];
      ctx.io.stdout(`${validateOnly ? 'valid (not applied)' : 'updated'} ${topic}: ${changed.map((k) => `${k}=${r.configs[k]?.value ?? '(default)'}`).join(', ')}\n`);
    },
  },
];

/** Runs `floe <words...> <args>`; returns the exit code. */
export async function runCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const command = COMMANDS.find((c) => c.words.every((w, i) => argv[i] === w));
  if (command === undefined) {
    const group = COMMANDS.filter((c) => c.words[0] === argv[0]);
    io.stderr(group.length > 0 ? `floe ${argv[0]}: give a subcommand: ${group.map((c) => c.words[1]).join(', ')}\n${overview()}` : `floe: unknown command '${argv.join(' ')}'\n${overview()}`);
    return EXIT.USAGE;
  }
  const usage = usageOf(command);
  const options = { ...COMMON, ...command.options };
  try {
    const args = parseArgs(argv.slice(command.words.length), options, usage);
    if (args.flags.has('help')) {
      io.stdout(helpOf(command));
      return EXIT.OK;
    }
    const [min, max] = command.positionals;
    if (args.positionals.length < min) throw new CliError(EXIT.USAGE, `missing ${command.args}\n${usage}`);
    if (args.positionals.length > max) throw new CliError(EXIT.USAGE, `unexpected argument '${args.positionals[max] ?? ''}'\n${usage}`);
    const url = args.options.get('admin-url')?.[0] ?? io.env.FLOE_ADMIN_URL ?? DEFAULT_ADMIN_URL;
    await command.run(args, { client: new AdminClient(url), io, json: args.flags.has('json'), usage });
    return EXIT.OK;
  } catch (err) {
    if (err instanceof CliError) {
      io.stderr(`floe ${command.words.join(' ')}: ${err.message}\n`);
      return err.exitCode;
    }
    io.stderr(`floe ${command.words.join(' ')}: ${err instanceof Error ? err.message : String(err)}\n`);
    return EXIT.FAILED;
  }
}

function usageOf(c: Command): string {
  return `usage: floe ${c.words.join(' ')}${c.args ? ' ' + c.args : ''} [options]   (floe ${c.words.join(' ')} --help)`;
}

function helpOf(c: Command): string {
  const options = { ...c.options, ...COMMON };
  const width = Math.max(...Object.entries(options).map(([k, o]) => k.length + (o.value ? 8 : 0)));
  const lines = [`floe ${c.words.join(' ')}${c.args ? ' ' + c.args : ''}: ${c.summary}`];
  if (c.details) lines.push('', c.details);
  lines.push('', 'Options:');
  for (const [k, o] of Object.entries(options)) lines.push(`  --${(k + (o.value ? ' <value>' : '')).padEnd(width)}  ${o.help}`);
  lines.push('', EXIT_CODES_HELP, '');
  return lines.join('\n');
}

/** `floe --help`. */
export function overview(): string {
  const rows = COMMANDS.map((c) => [`floe ${c.words.join(' ')}${c.args ? ' ' + c.args : ''}`, c.summary]);
  const width = Math.max(...rows.map((r) => (r[0] as string).length));
  return [
    'usage: floe [start] [--config FILE] [--key=value ...]   start a broker (floe start --help lists every setting)',
    '       floe <command> [options]                            talk to a running broker\'s admin port',
    '',
    'Commands:',
    ...rows.map(([a, b]) => `  ${(a as string).padEnd(width)}  ${b as string}`),
    '',
    `Every command takes --admin-url URL (default $FLOE_ADMIN_URL or ${DEFAULT_ADMIN_URL}), --json and --help.`,
    EXIT_CODES_HELP,
    '',
  ].join('\n');
}

function printJson(ctx: Context, value: unknown): void {
  ctx.io.stdout(JSON.stringify(value, null, 2) + '\n');
}

function printTable(ctx: Context, header: readonly string[], rows: readonly (readonly string[])[]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
  ctx.io.stdout([line(header), ...rows.map(line)].join('\n') + '\n');
}

function pct(v: number | undefined): string {
  return v === undefined ? '-' : `${(v * 100).toFixed(1)}%`;
}

function num(v: number | undefined): string {
  return v === undefined ? '-' : String(Math.round(v));
}

function when(ms: number): string {
  return ms >= 0 ? new Date(ms).toISOString() : '-';
}
