/**
 * Loads the broker configuration from, in increasing precedence: defaults, a file (`--config PATH` or
 * FLOE_CONFIG; Java properties, or JSON when the name ends in .json), environment variables (FLOE_ plus the
 * key in upper case with dots as underscores: FLOE_LOG_DIRS) and CLI flags (`--log.dirs=/x` or
 * `--log.dirs /x`). Every problem is reported at once, naming the key, where it came from and what is
 * expected; the result is frozen.
 */
import { readFileSync } from 'node:fs';
import { parseEndpoint, parseListeners, usesSasl, usesTls } from './listeners.js';
import { SETTINGS, SETTINGS_BY_KEY, type BrokerConfig, type Setting } from './settings.js';
import { parseConnectionOverrides } from '../server/connection-limits.js';

export class ConfigError extends Error {
  readonly code = 'INVALID_CONFIG';
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}\nRun with --help to see every setting.`);
    this.name = 'ConfigError';
  }
}

export interface LoadOptions {
  readonly argv?: readonly string[];
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Reads a config file; injectable for tests. */
  readonly readFile?: (path: string) => string;
}

export type LoadResult = { readonly help: true } | { readonly help: false; readonly config: BrokerConfig };

export interface Listener {
  readonly host: string;
  readonly port: number;
}

const ENV_PREFIX = 'FLOE_';
/** FLOE_ variables that are not settings: the config file, and the crash-test hooks (tiering/plugin/crash-points.ts, broker/transactions/crash-points.ts). */
const NOT_SETTINGS = new Set(['FLOE_CONFIG', 'FLOE_TIERING_CRASH_AT', 'FLOE_TXN_CRASH_AT']);

export function envName(key: string): string {
  return ENV_PREFIX + key.toUpperCase().replace(/\./g, '_');
}

/** One listener address (NAME://host:port) as host and port; undefined when it does not parse. */
export function parseListener(value: string): Listener | undefined {
  const ep = parseEndpoint(value);
  return ep ? { host: ep.host, port: ep.port } : undefined;
}

export function loadConfig(options: LoadOptions = {}): LoadResult {
  const argv = options.argv ?? [];
  const env = options.env ?? {};
  const readFile = options.readFile ?? ((p: string) => readFileSync(p, 'utf8'));
  const problems: string[] = [];
  const raw = new Map<string, { value: unknown; source: string }>();

  const cli = parseArgv(argv, problems);
  if (cli.help) return { help: true };

  const file = cli.configPath ?? env.FLOE_CONFIG;
  if (file !== undefined) {
    let text: string | undefined;
    try {
      text = readFile(file);
    } catch (err) {
      problems.push(`config file ${file}: cannot read it (${(err as Error).message})`);
    }
    if (text !== undefined) {
      for (const [key, value] of parseFile(file, text, problems)) setRaw(raw, key, value, `file ${file}`, problems);
    }
  }

  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith(ENV_PREFIX) || NOT_SETTINGS.has(name) || value === undefined) continue;
    const setting = SETTINGS.find((s) => envName(s.key) === name);
    if (!setting) {
      problems.push(`environment variable ${name} is not a setting (did you mean one of ${nearest(name)}?)`);
      continue;
    }
    raw.set(setting.key, { value, source: `environment ${name}` });
  }
  for (const [key, value] of cli.values) setRaw(raw, key, value, `flag --${key}`, problems);

  const out: Record<string, unknown> = {};
  for (const s of SETTINGS) out[s.key] = s.default;
  for (const [key, { value, source }] of raw) {
    const setting = SETTINGS_BY_KEY.get(key);
    if (!setting) {
      problems.push(`${source}: unknown setting '${key}'`);
      continue;
    }
    const parsed = coerce(setting, value);
    if (typeof parsed === 'object' && parsed !== null && 'error' in parsed) {
      // A secret's value is never repeated back, not even a wrong one.
      problems.push(setting.sensitive === true ? `${source}: ${key} must be a string (its value is secret and not shown)` : `${source}: ${key} ${parsed.error}`);
    }
    else out[key] = parsed;
  }

  const parsed = parseListeners(out['listeners'] as string, out['advertised.listeners'] as string, out['listener.security.protocol.map'] as string, problems);
  if (parsed) checkSecurity(out, parsed.listeners.map((l) => l.protocol), problems);
  const kafkaPorts = (parsed?.listeners ?? []).map((l) => l.port).filter((p) => p > 0);
  const registryPort = out['schema.registry.port'] as number;
  const kafkaPort = kafkaPorts.includes(registryPort) ? registryPort : kafkaPorts[0];
  if (registryPort > 0 && registryPort === kafkaPort) problems.push(`schema.registry.port ${registryPort} is the Kafka listener's port; pick another (0 picks a free one, -1 turns the registry off)`);
  if (registryPort > 0 && out['remote.log.storage.system.enable'] === true && registryPort === out['iceberg.rest.port']) {
    problems.push(`schema.registry.port ${registryPort} is also iceberg.rest.port; give them different ports`);
  }
  const adminPort = out['admin.port'] as number;
  const taken: [string, unknown][] = [
    ...kafkaPorts.map((p): [string, unknown] => ["a Kafka listener's port", p]),
    ['schema.registry.port', registryPort],
    ...(out['remote.log.storage.system.enable'] === true ? ([['iceberg.rest.port', out['iceberg.rest.port']]] as [string, unknown][]) : []),
  ];
  for (const [name, port] of taken) {
    if (adminPort > 0 && adminPort === port) problems.push(`admin.port ${adminPort} is also ${name}; give them different ports (0 picks a free one, -1 turns the admin port off)`);
  }
  for (const u of String(out['super.users']).split(';').map((x) => x.trim()).filter((x) => x !== '')) {
    if (!/^[^:]+:.+$/.test(u)) problems.push(`super.users: '${u}' is not a principal; write Type:name, semicolon-separated (User:admin;User:ops)`);
  }
  const connectionOverrides = parseConnectionOverrides(out['max.connections.per.ip.overrides'] as string);
  problems.push(...connectionOverrides.problems);
  if (out['max.connections.per.ip'] === 0 && connectionOverrides.overrides.size === 0) {
    problems.push('max.connections.per.ip can be 0 only with max.connections.per.ip.overrides naming the addresses that may connect');
  }
  checkCatalog(out, problems);
  if ((out['group.min.session.timeout.ms'] as number) > (out['group.max.session.timeout.ms'] as number)) {
    problems.push('group.min.session.timeout.ms must not exceed group.max.session.timeout.ms');
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return { help: false, config: Object.freeze(out) as BrokerConfig };
}

/**
 * Kafka's per-listener PLAIN users, `listener.name.<listener>.plain.sasl.jaas.config`, accepted as
 * `sasl.plain.jaas.config` (Floe's PLAIN users are shared by every SASL listener).
 */
const LISTENER_PLAIN_JAAS = /^listener\.name\.[A-Za-z0-9_-]+\.plain\.sasl\.jaas\.config$/;

function setRaw(raw: Map<string, { value: unknown; source: string }>, key: string, value: unknown, source: string, problems: string[]): void {
  if (!LISTENER_PLAIN_JAAS.test(key)) {
    raw.set(key, { value, source });
    return;
  }
  const prior = raw.get('sasl.plain.jaas.config');
  if (prior && prior.source.includes('listener.name.') && prior.value !== value) {
    problems.push(`${source}: ${key} differs from another listener's PLAIN users; Floe shares PLAIN users across SASL listeners, so give them one value`);
    return;
  }
  raw.set('sasl.plain.jaas.config', { value, source: `${source} (${key})` });
}

/** What iceberg.catalog.type=rest needs, and catalog settings that would otherwise be ignored silently. */
function checkCatalog(out: Record<string, unknown>, problems: string[]): void {
  const str = (k: string) => out[k] as string;
  if (out['iceberg.catalog.type'] !== 'rest') {
    const set = ['iceberg.catalog.uri', 'iceberg.catalog.warehouse', 'iceberg.catalog.prefix', 'iceberg.catalog.token', 'iceberg.catalog.credential', 'iceberg.catalog.oauth2.server.uri', ...SIGV4_KEYS].filter((k) => str(k) !== '');
    if (out['iceberg.catalog.sigv4.enabled'] === true) set.push('iceberg.catalog.sigv4.enabled');
    if (set.length > 0) problems.push(`${set.join(', ')} apply only to an external catalog: set iceberg.catalog.type=rest, or remove them`);
    return;
  }
  const uri = str('iceberg.catalog.uri');
  if (uri === '') problems.push('iceberg.catalog.type=rest needs iceberg.catalog.uri, the external catalog\'s base URI (e.g. http://catalog:8181)');
  else if (!/^https?:\/\/[^/]/.test(uri)) problems.push(`iceberg.catalog.uri must be an http:// or https:// URI, got '${uri}'`);
  const oauth = str('iceberg.catalog.oauth2.server.uri');
  if (oauth !== '' && !/^https?:\/\/[^/]/.test(oauth)) problems.push(`iceberg.catalog.oauth2.server.uri must be an http:// or https:// URI, got '${oauth}'`);
  const credential = str('iceberg.catalog.credential');
  if (credential !== '' && !/^[^:]+:.+$/.test(credential)) problems.push('iceberg.catalog.credential must be client_id:client_secret (its value is secret and not shown)');
  if (credential !== '' && str('iceberg.catalog.token') !== '') problems.push('set iceberg.catalog.token or iceberg.catalog.credential, not both');
  checkSigV4(out, problems);
}

const SIGV4_KEYS = ['iceberg.catalog.signing.region', 'iceberg.catalog.access.key.id', 'iceberg.catalog.secret.access.key', 'iceberg.catalog.session.token'];

/** SigV4 signing of the external catalog's requests: its settings go together (their values are secret). */
function checkSigV4(out: Record<string, unknown>, problems: string[]): void {
  const str = (k: string) => out[k] as string;
  if (out['iceberg.catalog.sigv4.enabled'] !== true) {
    const set = SIGV4_KEYS.filter((k) => str(k) !== '');
    if (set.length > 0) problems.push(`${set.join(', ')} apply only to SigV4 signing: set iceberg.catalog.sigv4.enabled=true, or remove them`);
    return;
  }
  if (str('iceberg.catalog.signing.name').trim() === '') problems.push('iceberg.catalog.signing.name must name the service signatures are made for (glue, s3tables, execute-api)');
  const id = str('iceberg.catalog.access.key.id');
  const secret = str('iceberg.catalog.secret.access.key');
  if ((id === '') !== (secret === '')) problems.push('iceberg.catalog.access.key.id and iceberg.catalog.secret.access.key go together: set both, or neither to use the AWS default credential chain (their values are secret and not shown)');
  if (str('iceberg.catalog.session.token') !== '' && id === '') problems.push('iceberg.catalog.session.token needs iceberg.catalog.access.key.id and iceberg.catalog.secret.access.key');
}

const SASL_MECHANISMS = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'];
const TLS_PROTOCOLS = ['TLSv1.2', 'TLSv1.3'];

/** What TLS and SASL listeners need before the broker can start (the files themselves are read at start). */
function checkSecurity(out: Record<string, unknown>, protocols: readonly string[], problems: string[]): void {
  if (protocols.some((p) => usesTls(p as never))) {
    const pemInline = out['ssl.keystore.certificate.chain'] !== '' || out['ssl.keystore.key'] !== '';
    if (pemInline && out['ssl.keystore.type'] !== 'PEM') problems.push('ssl.keystore.certificate.chain and ssl.keystore.key need ssl.keystore.type=PEM');
    if (pemInline && (out['ssl.keystore.certificate.chain'] === '' || out['ssl.keystore.key'] === '')) problems.push('ssl.keystore.certificate.chain and ssl.keystore.key go together; set both');
    if (!pemInline && out['ssl.keystore.location'] === '') problems.push('an SSL or SASL_SSL listener needs a server certificate: set ssl.keystore.location (or, with ssl.keystore.type=PEM, ssl.keystore.certificate.chain and ssl.keystore.key)');
    if (out['ssl.client.auth'] !== 'none' && out['ssl.truststore.location'] === '' && out['ssl.truststore.certificates'] === '') {
      problems.push(`ssl.client.auth=${String(out['ssl.client.auth'])} needs the CAs client certificates chain to: set ssl.truststore.location or ssl.truststore.certificates`);
    }
    const bad = (out['ssl.enabled.protocols'] as readonly string[]).filter((p) => !TLS_PROTOCOLS.includes(p));
    if (bad.length > 0 || (out['ssl.enabled.protocols'] as readonly string[]).length === 0) problems.push(`ssl.enabled.protocols must list some of ${TLS_PROTOCOLS.join(', ')}, got '${(out['ssl.enabled.protocols'] as readonly string[]).join(',')}'`);
  }
  if (protocols.some((p) => usesSasl(p as never))) {
    const mechanisms = out['sasl.enabled.mechanisms'] as readonly string[];
    const bad = mechanisms.filter((m) => !SASL_MECHANISMS.includes(m));
    if (bad.length > 0) problems.push(`sasl.enabled.mechanisms: ${bad.join(', ')} not supported; use some of ${SASL_MECHANISMS.join(', ')}`);
    if (mechanisms.length === 0) problems.push(`a SASL listener needs sasl.enabled.mechanisms (some of ${SASL_MECHANISMS.join(', ')})`);
  }
}

function parseArgv(argv: readonly string[], problems: string[]) {
  const values = new Map<string, string>();
  let configPath: string | undefined;
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--help' || arg === '-h') {
      help = true;
      continue;
    }
    if (!arg.startsWith('--')) {
      problems.push(`unexpected argument '${arg}': settings are given as --key=value`);
      continue;
    }
    const eq = arg.indexOf('=');
    const key = eq >= 0 ? arg.slice(2, eq) : arg.slice(2);
    let value: string | undefined = eq >= 0 ? arg.slice(eq + 1) : undefined;
    if (value === undefined) {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('--')) {
        problems.push(`flag --${key} needs a value`);
        continue;
      }
      value = next;
      i++;
    }
    if (key === 'config') configPath = value;
    else if (!SETTINGS_BY_KEY.has(key) && !LISTENER_PLAIN_JAAS.test(key)) problems.push(`flag --${key} is not a setting (did you mean one of ${nearest(key)}?)`);
    else values.set(key, value);
  }
  return { values, configPath, help };
}

function parseFile(path: string, text: string, problems: string[]): Map<string, unknown> {
  const out = new Map<string, unknown>();
  if (path.endsWith('.json')) {
    let obj: unknown;
    try {
      obj = JSON.parse(text);
    } catch (err) {
      problems.push(`config file ${path}: not valid JSON (${(err as Error).message})`);
      return out;
    }
    if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) {
      problems.push(`config file ${path}: must hold a JSON object of settings`);
      return out;
    }
    for (const [k, v] of Object.entries(obj)) out.set(k, v);
    return out;
  }
  text.split(/\r?\n/).forEach((line, i) => {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#') || trimmed.startsWith('!')) return;
    const eq = trimmed.search(/[=:]/);
    if (eq <= 0) {
      problems.push(`config file ${path}:${i + 1}: expected key=value`);
      return;
    }
    out.set(trimmed.slice(0, eq).trim(), trimmed.slice(eq + 1).trim());
  });
  return out;
}

function coerce(s: Setting, value: unknown): unknown {
  switch (s.type) {
    case 'int':
    case 'long': {
      let n = typeof value === 'number' ? value : typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value) : NaN;
      if (s.type === 'long' && typeof value === 'string' && /^-?\d+$/.test(value.trim())) {
        // Kafka's "no limit" is Long.MAX_VALUE (9223372036854775807): any 64-bit value is accepted, and one
        // beyond 2^53 means the same as 2^53 - 1 here (no setting counts that far).
        const big = BigInt(value.trim());
        if (big > 2n ** 63n - 1n || big < -(2n ** 63n)) return { error: `must fit in a 64-bit integer, got ${value.trim()}` };
        n = Number(big > BigInt(Number.MAX_SAFE_INTEGER) ? BigInt(Number.MAX_SAFE_INTEGER) : big < -BigInt(Number.MAX_SAFE_INTEGER) ? -BigInt(Number.MAX_SAFE_INTEGER) : big);
      }
      if (!Number.isSafeInteger(n)) return { error: `must be a whole number, got '${String(value)}'` };
      if (s.type === 'int' && (n < -(2 ** 31) || n > 2 ** 31 - 1)) return { error: `must fit in a 32-bit integer, got ${n}` };
      if (s.min !== undefined && n < s.min) return { error: `must be at least ${s.min}, got ${n}` };
      if (s.max !== undefined && n > s.max) return { error: `must be at most ${s.max}, got ${n}` };
      return n;
    }
    case 'bool':
      if (value === true || value === 'true') return true;
      if (value === false || value === 'false') return false;
      return { error: `must be true or false, got '${String(value)}'` };
    case 'enum':
      if (typeof value === 'string' && s.values?.includes(value)) return value;
      return { error: `must be one of ${s.values?.join(', ')}, got '${String(value)}'` };
    case 'list':
      if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return Object.freeze([...value]);
      if (typeof value === 'string') return Object.freeze(value.split(',').map((v) => v.trim()).filter((v) => v !== ''));
      return { error: `must be a comma-separated list, got '${String(value)}'` };
    case 'string':
      if (typeof value === 'string') return value;
      return { error: `must be a string, got ${JSON.stringify(value)}` };
  }
}

function nearest(name: string): string {
  const probe = name.toLowerCase().replace(/^floe_/, '').replace(/_/g, '.');
  const scored = SETTINGS.map((s) => ({ key: s.key, d: distance(probe, s.key) })).sort((a, b) => a.d - b.d);
  return scored
    .slice(0, 2)
    .map((s) => s.key)
    .join(', ');
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0] ?? 0;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j] ?? 0;
      row[j] = Math.min((row[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return row[b.length] ?? 0;
}

export function formatHelp(): string {
  const lines = [
    'Usage: floe [--config FILE] [--key=value ...]',
    '',
    'Starts a Floe broker. Settings come from defaults, then FILE (Java properties, or JSON if it ends in .json),',
    'then environment variables, then flags; later sources win. Every setting:',
    '',
  ];
  for (const s of SETTINGS) {
    const def = Array.isArray(s.default) ? s.default.join(',') : String(s.default);
    const values = 'values' in s ? ` (${s.values.join(' | ')})` : '';
    lines.push(`  --${s.key}  <${s.type}>${values}  default: ${def === '' ? '(empty)' : def}  env: ${envName(s.key)}`);
    lines.push(`      ${s.doc}`);
  }
  return lines.join('\n');
}
