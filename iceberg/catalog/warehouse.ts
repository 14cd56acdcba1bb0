/**
 * The built-in catalog. Everything it knows is durable in object storage, next to the tables:
 *
 *   <state>/namespaces/<ns>.json          {"namespace": [...], "properties": {...}}
 *   <state>/tables/<ns>/<table>.json      {"metadata-location": "...", "version": N}   (the table pointer)
 *
 * `<state>` defaults to `<warehouse>/_floe_catalog`; `<ns>` is the levels, each percent-encoded (dots too),
 * joined with '.'. A table lives at `<warehouse>/<level>/.../<table>` unless created elsewhere; its metadata
 * files are `<location>/metadata/<NNNNN>-<uuid>.metadata.json`, and `metadata/version-hint.text` names the
 * newest one (its stem) for path-based readers such as DuckDB's `iceberg_scan`.
 *
 * Commits: read the pointer (and its etag), check requirements, apply updates, write a new metadata file,
 * then swap the pointer with `putIfMatch` (creation with `putIfAbsent`). When another commit swapped first,
 * the requirements are checked again against the new metadata: if they still hold the updates are re-applied
 * (the REST protocol's semantics), otherwise `CommitConflictError` goes back to the caller, who rebuilds.
 *
 * Stores without conditional writes (FileIO capabilities `conditionalWrites: false`, e.g. s3rver or older
 * S3-compatible stores): the pointer is then held by this catalog process. Pointer reads and writes for one
 * table are serialised by an in-process lock, so the check-and-swap is atomic for every writer that goes
 * through this catalog (the broker, and outside engines via the REST server). It is NOT safe to run two
 * catalog processes over the same warehouse in that mode; give them a state store that has conditional
 * writes instead (`stateIO`/`stateLocation`, e.g. a local disk or a real S3 bucket).
 */
import { randomUUID } from 'node:crypto';
import type { FileIO, ObjectInfo } from '../io/file-io.js';
import { FileIOError } from '../io/file-io.js';
import { backoffDelay, sleep } from '../io/retry.js';
import { isJsonObject, parseJson, stringifyJson, type JsonValue } from '../json.js';
import { checkRequirements, CommitConflictError, TableMetadataBuilder, type TableRequirement, type TableUpdate } from '../table-metadata-builder.js';
import { parseTableMetadata, serializeTableMetadata, type TableMetadata } from '../table-metadata.js';
import {
  CatalogError,
  checkIdentifier,
  checkNamespace,
  identifierToString,
  namespaceToString,
  type Catalog,
  type CommitTableResult,
  type CreateTableRequest,
  type LoadTableResult,
  type Namespace,
  type TableIdentifier,
} from './catalog.js';

export interface WarehouseCatalogOptions {
  /** Catalog name, for messages and the REST config. Default 'floe'. */
  readonly name?: string;
  /** FileIO for the warehouse: table metadata and data. */
  readonly io: FileIO;
  /** Warehouse root, e.g. `file:///var/floe/warehouse` or `s3://bucket/warehouse`. */
  readonly warehouse: string;
  /** Where catalog state is kept; default `<warehouse>/_floe_catalog` on `io`. */
  readonly stateLocation?: string;
  /** FileIO for the state; default `io`. */
  readonly stateIO?: FileIO;
  /** Settings for engines returned with every loaded table (e.g. `s3.endpoint`, `s3.path-style-access`). */
  readonly tableConfig?: Readonly<Record<string, string>>;
  /** Pointer swaps attempted while requirements keep holding. Default 20. */
  readonly swapAttempts?: number;
  readonly now?: () => number;
}

interface Pointer {
  readonly metadataLocation: string;
  readonly version: number;
  /** Etag of the pointer object (conditional mode). */
  readonly etag: string | undefined;
}

const encodeLevel = (s: string): string => encodeURIComponent(s).replace(/\./g, '%2E').replace(/\*/g, '%2A');
const nsKey = (ns: Namespace): string => ns.map(encodeLevel).join('.');
const decodeNsKey = (key: string): string[] => key.split('.').map((p) => decodeURIComponent(p));
const trimSlash = (s: string): string => s.replace(/\/+$/, '');

/** `<location>/metadata/<NNNNN>-<uuid>.metadata.json` */
export function metadataFileLocation(tableLocation: string, version: number, uuid: string = randomUUID()): string {
  return `${trimSlash(tableLocation)}/metadata/${String(version).padStart(5, '0')}-${uuid}.metadata.json`;
}

/** The version number of a metadata file named `<NNNNN>-<uuid>.metadata.json` (or `vN.metadata.json`), or undefined. */
export function metadataFileVersion(location: string): number | undefined {
  const name = location.slice(location.lastIndexOf('/') + 1);
  const m = /^v?(\d+)(?:-[^/]*)?\.metadata\.json$/.exec(name);
  return m ? Number(m[1]) : undefined;
}

/** Serialises async work per key inside this process. */
class KeyedLock {
  private readonly tails = new Map<string, Promise<unknown>>();
  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const tail = next.catch(() => undefined);
    this.tails.set(key, tail);
    try {
      return await next;
    } finally {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}

export class WarehouseCatalog implements Catalog {
  readonly name: string;
  readonly warehouse: string;
  private readonly io: FileIO;
  private readonly stateIO: FileIO;
  private readonly state: string;
  private readonly tableConfig: Readonly<Record<string, string>>;
  private readonly swapAttempts: number;
  private readonly now: () => number;
  private readonly lock = new KeyedLock();
  private conditional: Promise<boolean> | undefined;

  constructor(options: WarehouseCatalogOptions) {
    this.name = options.name ?? 'floe';
    this.io = options.io;
    this.warehouse = trimSlash(options.warehouse);
    this.stateIO = options.stateIO ?? options.io;
    this.state = trimSlash(options.stateLocation ?? `${this.warehouse}/_floe_catalog`);
    this.tableConfig = { ...(options.tableConfig ?? {}) };
    this.swapAttempts = options.swapAttempts ?? 20;
    this.now = options.now ?? Date.now;
  }

  /** Whether pointer swaps use the store's conditional writes (true) or the in-process lock (false). */
  usesConditionalWrites(): Promise<boolean> {
    this.conditional ??= (async () => {
      if (!this.stateIO.capabilities) return true;
      return (await this.stateIO.capabilities(`${this.state}/`)).conditionalWrites;
    })();
    return this.conditional;
  }

  // ---------------------------------------------------------------------------------------------------
  // Namespaces

  private namespaceLocation(ns: Namespace): string {
    return `${this.state}/namespaces/${nsKey(ns)}.json`;
  }

  private async allNamespaces(): Promise<string[][]> {
    const prefix = `${this.state}/namespaces/`;
    const out: string[][] = [];
    for await (const o of this.stateIO.list(prefix)) {
      const rest = o.location.slice(prefix.length);
      if (!rest.endsWith('.json') || rest.includes('/')) continue;
      out.push(decodeNsKey(rest.slice(0, -'.json'.length)));
    }
    return out;
  }

  async listNamespaces(parent: Namespace = []): Promise<Namespace[]> {
    const seen = new Map<string, Namespace>();
    for (const ns of await this.allNamespaces()) {
      if (ns.length <= parent.length || !parent.every((p, i) => ns[i] === p)) continue;
      const child = ns.slice(0, parent.length + 1);
      seen.set(nsKey(child), child);
    }
    // A parent exists if it was created or if namespaces were created below it.
    if (parent.length > 0 && seen.size === 0 && !(await this.namespaceExists(parent))) {
      throw new CatalogError('NO_SUCH_NAMESPACE', `Namespace ${namespaceToString(parent)} does not exist; create it first`);
    }
    return [...seen.keys()].sort().map((k) => seen.get(k) as Namespace);
  }

  async createNamespace(ns: Namespace, properties: Readonly<Record<string, string>> = {}): Promise<void> {
    checkNamespace(ns);
    const body = Buffer.from(stringifyJson({ namespace: [...ns], properties: { ...properties } }, 2));
    const loc = this.namespaceLocation(ns);
    await this.createObject(loc, body, () => new CatalogError('ALREADY_EXISTS', `Namespace ${namespaceToString(ns)} already exists`));
  }

  async loadNamespaceProperties(ns: Namespace): Promise<Record<string, string>> {
    checkNamespace(ns);
    const json = await this.readJson(this.namespaceLocation(ns));
    if (json === undefined) throw new CatalogError('NO_SUCH_NAMESPACE', `Namespace ${namespaceToString(ns)} does not exist; create it first`);
    const props = isJsonObject(json) && isJsonObject(json['properties']) ? json['properties'] : {};
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(props)) if (typeof v === 'string') out[k] = v;
    return out;
  }

  async namespaceExists(ns: Namespace): Promise<boolean> {
    checkNamespace(ns);
    return (await this.stateIO.head(this.namespaceLocation(ns))) !== undefined;
  }

  async dropNamespace(ns: Namespace): Promise<void> {
    if (!(await this.namespaceExists(ns))) throw new CatalogError('NO_SUCH_NAMESPACE', `Namespace ${namespaceToString(ns)} does not exist`);
    if ((await this.listTables(ns)).length > 0) {
      throw new CatalogError('NAMESPACE_NOT_EMPTY', `Namespace ${namespaceToString(ns)} still holds tables; drop them first`);
    }
    if ((await this.listNamespaces(ns)).length > 0) {
      throw new CatalogError('NAMESPACE_NOT_EMPTY', `Namespace ${namespaceToString(ns)} still holds namespaces; drop them first`);
    }
    await this.stateIO.delete(this.namespaceLocation(ns));
  }

  // ---------------------------------------------------------------------------------------------------
  // Tables

  private pointerLocation(id: TableIdentifier): string {
    return `${this.state}/tables/${nsKey(id.namespace)}/${encodeLevel(id.name)}.json`;
  }

  /** The default location of a new table. */
  defaultTableLocation(id: TableIdentifier): string {
    return `${this.warehouse}/${id.namespace.map(encodeURIComponent).join('/')}/${encodeURIComponent(id.name)}`;
  }

  async listTables(ns: Namespace): Promise<TableIdentifier[]> {
    if (!(await this.namespaceExists(ns))) throw new CatalogError('NO_SUCH_NAMESPACE', `Namespace ${namespaceToString(ns)} does not exist`);
    const prefix = `${this.state}/tables/${nsKey(ns)}/`;
    const out: TableIdentifier[] = [];
    for await (const o of this.stateIO.list(prefix)) {
      const rest = o.location.slice(prefix.length);
      if (!rest.endsWith('.json') || rest.includes('/')) continue;
      out.push({ namespace: [...ns], name: decodeURIComponent(rest.slice(0, -'.json'.length)) });
    }
    return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  async tableExists(id: TableIdentifier): Promise<boolean> {
    checkIdentifier(id);
    return (await this.stateIO.head(this.pointerLocation(id))) !== undefined;
  }

  async createTable(id: TableIdentifier, request: CreateTableRequest): Promise<LoadTableResult> {
    checkIdentifier(id);
    if (!(await this.namespaceExists(id.namespace))) {
      throw new CatalogError('NO_SUCH_NAMESPACE', `Cannot create table ${identifierToString(id)}: namespace ${namespaceToString(id.namespace)} does not exist; create it first`);
    }
    if (await this.tableExists(id)) throw new CatalogError('ALREADY_EXISTS', `Table ${identifierToString(id)} already exists`);
    const location = trimSlash(request.location ?? this.defaultTableLocation(id));
    const { metadata } = TableMetadataBuilder.newTable({
      schema: request.schema,
      location,
      ...(request.partitionSpec ? { spec: request.partitionSpec } : {}),
      ...(request.sortOrder ? { sortOrder: request.sortOrder } : {}),
      ...(request.properties ? { properties: request.properties } : {}),
      ...(request.formatVersion ? { formatVersion: request.formatVersion } : {}),
      now: this.now,
    }).build();
    const metadataLocation = metadataFileLocation(location, 0);
    await this.io.put(metadataLocation, Buffer.from(serializeTableMetadata(metadata)));
    const pointer = this.pointerBody(metadataLocation, 0);
    try {
      await this.createObject(this.pointerLocation(id), pointer, () => new CatalogError('ALREADY_EXISTS', `Table ${identifierToString(id)} already exists`));
    } catch (err) {
      await this.io.delete(metadataLocation);
      throw err;
    }
    await this.withPointerLock(id, () => this.putVersionHint(metadataLocation));
    return { metadataLocation, metadata, config: { ...this.tableConfig } };
  }

  async registerTable(id: TableIdentifier, metadataLocation: string): Promise<LoadTableResult> {
    checkIdentifier(id);
    if (!(await this.namespaceExists(id.namespace))) {
      throw new CatalogError('NO_SUCH_NAMESPACE', `Cannot register table ${identifierToString(id)}: namespace ${namespaceToString(id.namespace)} does not exist; create it first`);
    }
    const metadata = await this.readMetadata(metadataLocation);
    const pointer = this.pointerBody(metadataLocation, metadataFileVersion(metadataLocation) ?? 0);
    await this.createObject(this.pointerLocation(id), pointer, () => new CatalogError('ALREADY_EXISTS', `Table ${identifierToString(id)} already exists`));
    return { metadataLocation, metadata, config: { ...this.tableConfig } };
  }

  async loadTable(id: TableIdentifier): Promise<LoadTableResult> {
    checkIdentifier(id);
    // In lock mode the pointer is read under the lock too: stores without conditional writes may not make
    // an overwrite atomic for readers either (s3rver serves a half-written object).
    const p = await this.withPointerLock(id, () => this.readPointer(id));
    const metadata = await this.readMetadata(p.metadataLocation);
    return { metadataLocation: p.metadataLocation, metadata, config: { ...this.tableConfig } };
  }

  async dropTable(id: TableIdentifier, options: { purge?: boolean } = {}): Promise<void> {
    checkIdentifier(id);
    const p = await this.withPointerLock(id, () => this.readPointer(id));
    let location: string | undefined;
    if (options.purge) location = (await this.readMetadata(p.metadataLocation)).location;
    await this.withPointerLock(id, () => this.stateIO.delete(this.pointerLocation(id)));
    if (location !== undefined) {
      const gone: string[] = [];
      for await (const o of this.io.list(`${location}/`)) gone.push(o.location);
      for (const l of gone) await this.io.delete(l);
    }
  }

  async commitTable(id: TableIdentifier, requirements: readonly TableRequirement[], updates: readonly TableUpdate[]): Promise<CommitTableResult> {
    checkIdentifier(id);
    for (let attempt = 0; ; attempt++) {
      const outcome = await this.withPointerLock(id, async () => {
        const p = await this.readPointer(id);
        const base = await this.readMetadata(p.metadataLocation);
        checkRequirements(base, requirements);
        const builder = TableMetadataBuilder.fromMetadata(base, { metadataLocation: p.metadataLocation, now: this.now });
        for (const u of updates) builder.applyUpdate(u);
        const metadata = trimMetadataLog(builder.build().metadata);
        const version = p.version + 1;
        const metadataLocation = metadataFileLocation(metadata.location, version);
        await this.io.put(metadataLocation, Buffer.from(serializeTableMetadata(metadata)));
        const swapped = await this.swapPointer(id, p, this.pointerBody(metadataLocation, version));
        if (!swapped) {
          await this.io.delete(metadataLocation).catch(() => undefined);
          return undefined;
        }
        if (p.etag === undefined) await this.putVersionHint(metadataLocation); // lock mode: no race to settle
        return { metadataLocation, metadata, base, lockMode: p.etag === undefined };
      });
      if (outcome) {
        if (!outcome.lockMode) await this.writeVersionHint(id, outcome.metadataLocation);
        await this.pruneMetadataFiles(outcome.base, outcome.metadata);
        return { metadataLocation: outcome.metadataLocation, metadata: outcome.metadata };
      }
      if (attempt + 1 >= this.swapAttempts) {
        // A conflict (409 over REST): the caller reloads and retries, as after any lost race.
        throw new CommitConflictError(
          requirements[0] ?? { type: 'assert-create' },
          `Table ${identifierToString(id)}: other commits kept landing first during ${this.swapAttempts} attempts`,
        );
      }
      await sleep(backoffDelay(attempt, { baseDelayMs: 5, maxDelayMs: 200 }));
    }
  }

  /**
   * With `write.metadata.delete-after-commit.enabled=true`, deletes the metadata files that fell off the
   * metadata log in this commit (Iceberg's rule: what the old log named and the new one does not). Best
   * effort: a file left behind is found by orphan removal.
   */
  private async pruneMetadataFiles(base: TableMetadata, metadata: TableMetadata): Promise<void> {
    if ((metadata.properties[DELETE_AFTER_COMMIT_ENABLED] ?? 'false').trim().toLowerCase() !== 'true') return;
    const still = new Set(metadata['metadata-log'].map((e) => e['metadata-file']));
    for (const e of base['metadata-log']) {
      if (still.has(e['metadata-file'])) continue;
      await this.io.delete(e['metadata-file']).catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    // The FileIOs belong to the caller.
  }

  // ---------------------------------------------------------------------------------------------------
  // Pointer and state objects

  private pointerBody(metadataLocation: string, version: number): Buffer {
    return Buffer.from(stringifyJson({ 'metadata-location': metadataLocation, version }, 2));
  }

  private async withPointerLock<T>(id: TableIdentifier, fn: () => Promise<T>): Promise<T> {
    if (await this.usesConditionalWrites()) return fn();
    return this.lock.run(this.pointerLocation(id), fn);
  }

  private async readPointer(id: TableIdentifier): Promise<Pointer> {
    const loc = this.pointerLocation(id);
    let info: ObjectInfo | undefined;
    const conditional = await this.usesConditionalWrites();
    if (conditional) {
      info = await this.stateIO.head(loc);
      if (!info) throw noSuchTable(id);
    }
    const json = await this.readJson(loc, this.stateIO);
    if (json === undefined) throw noSuchTable(id);
    if (!isJsonObject(json) || typeof json['metadata-location'] !== 'string' || typeof json['version'] !== 'number') {
      throw new CatalogError('SERVICE_ERROR', `The catalog pointer ${loc} of table ${identifierToString(id)} is damaged; restore it from the newest metadata file`);
    }
    return { metadataLocation: json['metadata-location'], version: json['version'], etag: info?.etag };
  }

  /** Swaps the pointer from `from` to `body`; false when someone else moved it first. */
  private async swapPointer(id: TableIdentifier, from: Pointer, body: Buffer): Promise<boolean> {
    const loc = this.pointerLocation(id);
    if (from.etag === undefined) {
      // Lock mode: we hold the per-table lock, so a plain put is the swap.
      await this.stateIO.put(loc, body);
      return true;
    }
    try {
      await this.stateIO.putIfMatch(loc, body, from.etag);
      return true;
    } catch (err) {
      if (err instanceof FileIOError && (err.code === 'PRECONDITION_FAILED' || err.code === 'NOT_FOUND')) {
        if (err.code === 'NOT_FOUND' || !(await this.stateIO.head(loc))) throw noSuchTable(id);
        return false;
      }
      throw err;
    }
  }

  private async createObject(loc: string, body: Buffer, exists: () => CatalogError): Promise<void> {
    if (await this.usesConditionalWrites()) {
      try {
        await this.stateIO.putIfAbsent(loc, body);
      } catch (err) {
        if (err instanceof FileIOError && err.code === 'ALREADY_EXISTS') throw exists();
        throw err;
      }
      return;
    }
    await this.lock.run(loc, async () => {
      if (await this.stateIO.head(loc)) throw exists();
      await this.stateIO.put(loc, body);
    });
  }

  private async readJson(loc: string, io: FileIO = this.stateIO): Promise<JsonValue | undefined> {
    let bytes: Buffer;
    try {
      bytes = await io.get(loc);
    } catch (err) {
      if (err instanceof FileIOError && err.code === 'NOT_FOUND') return undefined;
      throw err;
    }
    return parseJson(bytes.toString('utf8'));
  }

  private async readMetadata(location: string): Promise<TableMetadata> {
    let bytes: Buffer;
    try {
      bytes = await this.io.get(location);
    } catch (err) {
      if (err instanceof FileIOError && err.code === 'NOT_FOUND') {
        throw new CatalogError('SERVICE_ERROR', `Metadata file ${location} named by the catalog is missing; restore it or point the table at an existing metadata file`, { cause: err });
      }
      throw err;
    }
    return parseTableMetadata(bytes.toString('utf8'));
  }

  /** Writes `metadata/version-hint.text` next to a metadata file, naming it by its stem. */
  private async putVersionHint(metadataLocation: string): Promise<void> {
    const dir = metadataLocation.slice(0, metadataLocation.lastIndexOf('/'));
    const stem = metadataLocation.slice(dir.length + 1).replace(/\.metadata\.json$/, '');
    await this.io.put(`${dir}/version-hint.text`, Buffer.from(stem));
  }

  /**
   * Writes `metadata/version-hint.text` (the stem of the newest metadata file). Commits racing each other may
   * write hints out of order, so after writing, the pointer is read again until the hint names its file.
   */
  private async writeVersionHint(id: TableIdentifier, metadataLocation: string): Promise<void> {
    let target = metadataLocation;
    for (let i = 0; i < 10; i++) {
      await this.putVersionHint(target);
      let now: string;
      try {
        now = (await this.readPointer(id)).metadataLocation;
      } catch {
        return; // dropped meanwhile
      }
      if (now === target || (metadataFileVersion(now) ?? 0) < (metadataFileVersion(target) ?? 0)) return;
      target = now;
    }
  }
}

/** Table property: delete metadata files that fall off the metadata log after a commit (Iceberg's name; default false). */
export const DELETE_AFTER_COMMIT_ENABLED = 'write.metadata.delete-after-commit.enabled';

/** Table property: how many previous metadata files `metadata-log` keeps (Iceberg's name and default). */
export const PREVIOUS_VERSIONS_MAX = 'write.metadata.previous-versions-max';
const DEFAULT_PREVIOUS_VERSIONS_MAX = 100;

/** Keeps the newest `write.metadata.previous-versions-max` entries of the metadata log, so metadata stays bounded. */
function trimMetadataLog(md: TableMetadata): TableMetadata {
  const raw = Number(md.properties[PREVIOUS_VERSIONS_MAX] ?? DEFAULT_PREVIOUS_VERSIONS_MAX);
  const max = Number.isSafeInteger(raw) && raw >= 1 ? raw : DEFAULT_PREVIOUS_VERSIONS_MAX;
  const log = md['metadata-log'];
  return log.length <= max ? md : { ...md, 'metadata-log': log.slice(log.length - max) };
}

function noSuchTable(id: TableIdentifier): CatalogError {
  return new CatalogError('NO_SUCH_TABLE', `Table ${identifierToString(id)} does not exist`);
}
