/**
 * Metadata changes, in the style of iceberg-rust's `TableMetadataBuilder`: start from metadata (or a new
 * table), apply changes, `build()` to get `{ metadata, changes }`. Changes are the REST catalog's
 * `TableUpdate` objects (`action: 'add-schema'`, ...), so a catalog can replay what a client sent and a
 * committer can send what it applied. `TableRequirement`s (`type: 'assert-...'`) guard a commit against
 * concurrent changes: `checkRequirements(base, requirements)` throws a `CommitConflictError`.
 */
import { randomUUID } from 'node:crypto';
import { PARTITION_DATA_ID_START, specsEquivalent, validatePartitionSpec, type PartitionSpec } from './partition-spec.js';
import { assignFreshSchemaIds, checkSchemaEvolution, highestFieldId, sameSchemaStructure, validateSchema, type Schema } from './schema.js';
import { MAIN_BRANCH, type MetadataLogEntry, type Snapshot, type SnapshotRef } from './snapshot.js';
import { UNSORTED_ORDER, sortOrdersEquivalent, validateSortOrder, type SortOrder } from './sort-order.js';
import { DEFAULT_FORMAT_VERSION, validateTableMetadata, type FormatVersion, type TableMetadata } from './table-metadata.js';
import { IcebergError } from './types.js';

/** REST `TableUpdate`s that this builder applies. `-1` ids mean "the last one added in this change set". */
export type TableUpdate =
  | { readonly action: 'assign-uuid'; readonly uuid: string }
  | { readonly action: 'upgrade-format-version'; readonly 'format-version': number }
  | { readonly action: 'add-schema'; readonly schema: Schema; readonly 'last-column-id'?: number }
  | { readonly action: 'set-current-schema'; readonly 'schema-id': number }
  | { readonly action: 'add-spec'; readonly spec: PartitionSpec }
  | { readonly action: 'set-default-spec'; readonly 'spec-id': number }
  | { readonly action: 'add-sort-order'; readonly 'sort-order': SortOrder }
  | { readonly action: 'set-default-sort-order'; readonly 'sort-order-id': number }
  | { readonly action: 'add-snapshot'; readonly snapshot: Snapshot }
  | ({ readonly action: 'set-snapshot-ref'; readonly 'ref-name': string } & SnapshotRef)
  | { readonly action: 'remove-snapshots'; readonly 'snapshot-ids': readonly bigint[] }
  | { readonly action: 'remove-snapshot-ref'; readonly 'ref-name': string }
  | { readonly action: 'set-location'; readonly location: string }
  | { readonly action: 'set-properties'; readonly updates: Readonly<Record<string, string>> }
  | { readonly action: 'remove-properties'; readonly removals: readonly string[] };

/** REST `TableRequirement`s. */
export type TableRequirement =
  | { readonly type: 'assert-create' }
  | { readonly type: 'assert-table-uuid'; readonly uuid: string }
  | { readonly type: 'assert-ref-snapshot-id'; readonly ref: string; readonly 'snapshot-id': bigint | null }
  | { readonly type: 'assert-last-assigned-field-id'; readonly 'last-assigned-field-id': number }
  | { readonly type: 'assert-current-schema-id'; readonly 'current-schema-id': number }
  | { readonly type: 'assert-last-assigned-partition-id'; readonly 'last-assigned-partition-id': number }
  | { readonly type: 'assert-default-spec-id'; readonly 'default-spec-id': number }
  | { readonly type: 'assert-default-sort-order-id'; readonly 'default-sort-order-id': number };

/** A requirement did not hold: someone else committed first. Reload the table, re-apply, retry. */
export class CommitConflictError extends IcebergError {
  constructor(
    readonly requirement: TableRequirement,
    message: string,
  ) {
    super('COMMIT_CONFLICT', `${message}; the table changed since it was loaded: refresh it, re-apply the changes and retry`);
    this.name = 'CommitConflictError';
  }
}

const show = (v: bigint | number | string | null | undefined): string => (v === undefined || v === null ? 'none' : String(v));

/** Checks requirements against the current metadata (`undefined` when the table does not exist). */
export function checkRequirements(base: TableMetadata | undefined, requirements: readonly TableRequirement[]): void {
  for (const r of requirements) {
    if (r.type === 'assert-create') {
      if (base !== undefined) throw new CommitConflictError(r, 'assert-create failed: the table already exists');
      continue;
    }
    if (base === undefined) throw new CommitConflictError(r, `${r.type} failed: the table does not exist`);
    switch (r.type) {
      case 'assert-table-uuid':
        if (base['table-uuid'] !== r.uuid.toLowerCase()) throw new CommitConflictError(r, `assert-table-uuid failed: expected ${r.uuid}, table is ${base['table-uuid']}`);
        break;
      case 'assert-ref-snapshot-id': {
        const ref = base.refs[r.ref];
        const actual = ref?.['snapshot-id'] ?? null;
        if (r['snapshot-id'] === null && ref !== undefined) {
          throw new CommitConflictError(r, `assert-ref-snapshot-id failed: ref '${r.ref}' was expected not to exist but points at ${actual}`);
        }
        if (r['snapshot-id'] !== null && actual !== r['snapshot-id']) {
          throw new CommitConflictError(r, `assert-ref-snapshot-id failed: ref '${r.ref}' is at ${show(actual)}, expected ${r['snapshot-id']}`);
        }
        break;
      }
      case 'assert-last-assigned-field-id':
        if (base['last-column-id'] !== r['last-assigned-field-id']) {
          throw new CommitConflictError(r, `assert-last-assigned-field-id failed: table is at ${base['last-column-id']}, expected ${r['last-assigned-field-id']}`);
        }
        break;
      case 'assert-current-schema-id':
        if (base['current-schema-id'] !== r['current-schema-id']) {
          throw new CommitConflictError(r, `assert-current-schema-id failed: table is at ${base['current-schema-id']}, expected ${r['current-schema-id']}`);
        }
        break;
      case 'assert-last-assigned-partition-id':
        if (base['last-partition-id'] !== r['last-assigned-partition-id']) {
          throw new CommitConflictError(r, `assert-last-assigned-partition-id failed: table is at ${base['last-partition-id']}, expected ${r['last-assigned-partition-id']}`);
        }
        break;
      case 'assert-default-spec-id':
        if (base['default-spec-id'] !== r['default-spec-id']) {
          throw new CommitConflictError(r, `assert-default-spec-id failed: table is at ${base['default-spec-id']}, expected ${r['default-spec-id']}`);
        }
        break;
      case 'assert-default-sort-order-id':
        if (base['default-sort-order-id'] !== r['default-sort-order-id']) {
          throw new CommitConflictError(r, `assert-default-sort-order-id failed: table is at ${base['default-sort-order-id']}, expected ${r['default-sort-order-id']}`);
        }
        break;
    }
  }
}

export interface NewTableOptions {
  readonly schema: Schema;
  readonly location: string;
  readonly spec?: PartitionSpec;
  readonly sortOrder?: SortOrder;
  readonly properties?: Readonly<Record<string, string>>;
  readonly formatVersion?: FormatVersion;
  readonly tableUuid?: string;
  /** Defaults to Date.now(); pass a clock for deterministic output. */
  readonly now?: () => number;
}

export interface BuildResult {
  readonly metadata: TableMetadata;
  readonly changes: readonly TableUpdate[];
}

function bad(message: string): never {
  throw new IcebergError('INVALID_UPDATE', message);
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

export class TableMetadataBuilder {
  private md: Mutable<TableMetadata>;
  private readonly changes: TableUpdate[] = [];
  private lastAddedSchemaId: number | undefined;
  private lastAddedSpecId: number | undefined;
  private lastAddedOrderId: number | undefined;
  private readonly now: () => number;
  private snapshotsChanged = false;

  private constructor(base: TableMetadata, now: () => number, private readonly previousFile: MetadataLogEntry | undefined) {
    this.md = { ...base, refs: { ...base.refs }, properties: { ...base.properties } };
    this.now = now;
  }

  /**
   * Starts from existing metadata. Pass the location of the file it was read from to have it appended to
   * `metadata-log` when the result is built (as a new metadata file supersedes it).
   */
  static fromMetadata(base: TableMetadata, options: { metadataLocation?: string; now?: () => number } = {}): TableMetadataBuilder {
    const prev = options.metadataLocation === undefined ? undefined : { 'metadata-file': options.metadataLocation, 'timestamp-ms': base['last-updated-ms'] };
    return new TableMetadataBuilder(base, options.now ?? Date.now, prev);
  }

  /**
   * A new table. Schema field ids are reassigned from 1 (the spec and sort order are remapped by column
   * name accordingly), partition field ids from 1000; the changes list the updates that create it.
   */
  static newTable(options: NewTableOptions): TableMetadataBuilder {
    const formatVersion = options.formatVersion ?? DEFAULT_FORMAT_VERSION;
    const { schema: fresh, lastColumnId } = assignFreshSchemaIds({ ...options.schema, 'schema-id': 0 }, 0, 0);
    const remap = new Map<number, number>();
    const oldIds = [...flatIds(options.schema)];
    const newIds = [...flatIds(fresh)];
    oldIds.forEach((id, i) => remap.set(id, newIds[i] ?? id));
    const mapId = (id: number, what: string): number => {
      const m = remap.get(id);
      if (m === undefined) bad(`${what} refers to source-id ${id}, which is not in the schema`);
      return m;
    };
    let nextPartitionId = PARTITION_DATA_ID_START;
    const spec: PartitionSpec = {
      'spec-id': 0,
      fields: (options.spec?.fields ?? []).map((f) => ({
        ...f,
        'source-id': mapId(f['source-id'], `partition field '${f.name}'`),
        ...(f['source-ids'] ? { 'source-ids': f['source-ids'].map((x) => mapId(x, `partition field '${f.name}'`)) } : {}),
        'field-id': nextPartitionId++,
      })),
    };
    const order: SortOrder =
      options.sortOrder === undefined || options.sortOrder.fields.length === 0
        ? UNSORTED_ORDER
        : {
            'order-id': 1,
            fields: options.sortOrder.fields.map((f) => ({
              ...f,
              'source-id': mapId(f['source-id'], 'sort field'),
              ...(f['source-ids'] ? { 'source-ids': f['source-ids'].map((x) => mapId(x, 'sort field')) } : {}),
            })),
          };
    const now = options.now ?? Date.now;
    const uuid = options.tableUuid ?? randomUUID();
    const empty: TableMetadata = {
      'format-version': formatVersion,
      'table-uuid': uuid,
      location: options.location,
      'last-sequence-number': 0,
      'last-updated-ms': now(),
      'last-column-id': 0,
      schemas: [],
      'current-schema-id': -1,
      'partition-specs': [],
      'default-spec-id': -1,
      'last-partition-id': PARTITION_DATA_ID_START - 1,
      properties: {},
      'current-snapshot-id': undefined,
      snapshots: [],
      'snapshot-log': [],
      'metadata-log': [],
      'sort-orders': [],
      'default-sort-order-id': -1,
      refs: {},
      ...(formatVersion >= 3 ? { 'next-row-id': 0 } : {}),
    };
    const b = new TableMetadataBuilder(empty, now, undefined);
    b.changes.push({ action: 'assign-uuid', uuid }, { action: 'upgrade-format-version', 'format-version': formatVersion });
    b.addSchema(fresh, lastColumnId).setCurrentSchema(-1);
    b.addPartitionSpec(spec).setDefaultPartitionSpec(-1);
    b.addSortOrder(order).setDefaultSortOrder(-1);
    b.setLocation(options.location);
    if (options.properties && Object.keys(options.properties).length > 0) b.setProperties(options.properties);
    return b;
  }

  /** Applies one REST `TableUpdate`. */
  applyUpdate(u: TableUpdate): this {
    switch (u.action) {
      case 'assign-uuid':
        return this.assignUuid(u.uuid);
      case 'upgrade-format-version':
        return this.upgradeFormatVersion(u['format-version']);
      case 'add-schema':
        return this.addSchema(u.schema, u['last-column-id']);
      case 'set-current-schema':
        return this.setCurrentSchema(u['schema-id']);
      case 'add-spec':
        return this.addPartitionSpec(u.spec);
      case 'set-default-spec':
        return this.setDefaultPartitionSpec(u['spec-id']);
      case 'add-sort-order':
        return this.addSortOrder(u['sort-order']);
      case 'set-default-sort-order':
        return this.setDefaultSortOrder(u['sort-order-id']);
      case 'add-snapshot':
        return this.addSnapshot(u.snapshot);
      case 'set-snapshot-ref': {
        const { action: _a, 'ref-name': name, ...ref } = u;
        return this.setRef(name, ref);
      }
      case 'remove-snapshots':
        return this.removeSnapshots(u['snapshot-ids']);
      case 'remove-snapshot-ref':
        return this.removeRef(u['ref-name']);
      case 'set-location':
        return this.setLocation(u.location);
      case 'set-properties':
        return this.setProperties(u.updates);
      case 'remove-properties':
        return this.removeProperties(u.removals);
    }
  }

  assignUuid(uuid: string): this {
    const u = uuid.toLowerCase();
    if (u === this.md['table-uuid']) return this;
    if (this.md.schemas.length > 0) bad(`assign-uuid: the table already has uuid ${this.md['table-uuid']}; a table's uuid never changes`);
    this.md['table-uuid'] = u;
    this.changes.push({ action: 'assign-uuid', uuid: u });
    return this;
  }

  upgradeFormatVersion(version: number): this {
    if (version === this.md['format-version']) return this;
    if (version !== 2 && version !== 3) bad(`upgrade-format-version: format-version ${version} is not supported (2 or 3)`);
    if (version < this.md['format-version']) bad(`upgrade-format-version: cannot downgrade from ${this.md['format-version']} to ${version}`);
    this.md['format-version'] = version;
    if (version >= 3 && this.md['next-row-id'] === undefined) this.md['next-row-id'] = 0;
    this.changes.push({ action: 'upgrade-format-version', 'format-version': version });
    return this;
  }

  /**
   * Adds a schema (reusing an identical existing one). Its schema-id is replaced by the next free id; the
   * schema must be a valid evolution of the current one. last-column-id becomes the max of the old value,
   * the schema's highest id and `lastColumnId` if given.
   */
  addSchema(schema: Schema, lastColumnId?: number): this {
    const existing = this.md.schemas.find((s) => sameSchemaStructure(s, schema));
    if (existing) {
      this.lastAddedSchemaId = existing['schema-id'];
      return this;
    }
    const id = this.md.schemas.reduce((m, s) => Math.max(m, s['schema-id'] + 1), 0);
    const added: Schema = { ...schema, 'schema-id': id };
    try {
      validateSchema(added, this.md['format-version']);
    } catch (e) {
      if (e instanceof IcebergError) bad(`add-schema: ${e.message}`);
      throw e;
    }
    const current = this.md.schemas.find((s) => s['schema-id'] === this.md['current-schema-id']);
    if (current) {
      const check = checkSchemaEvolution(current, added, this.md['format-version']);
      if (!check.ok) bad(`add-schema: not a valid evolution of schema ${current['schema-id']}: ${check.reasons.join('; ')}`);
    }
    this.md.schemas = [...this.md.schemas, added];
    this.md['last-column-id'] = Math.max(this.md['last-column-id'], highestFieldId(added), lastColumnId ?? 0);
    this.lastAddedSchemaId = id;
    this.changes.push({ action: 'add-schema', schema: added });
    return this;
  }

  setCurrentSchema(schemaId: number): this {
    const id = schemaId === -1 ? this.lastAddedSchemaId : schemaId;
    if (id === undefined) bad('set-current-schema -1: no schema was added in this change set');
    if (!this.md.schemas.some((s) => s['schema-id'] === id)) bad(`set-current-schema: schema ${id} does not exist`);
    if (id === this.md['current-schema-id']) return this;
    this.md['current-schema-id'] = id;
    this.changes.push({ action: 'set-current-schema', 'schema-id': id === this.lastAddedSchemaId ? -1 : id });
    return this;
  }

  /**
   * Adds a partition spec (reusing an equivalent one). Its spec-id becomes the next free id; fields that
   * match a field of an existing spec (same source, transform) keep that field id, others get fresh ids above
   * last-partition-id, as the spec asks.
   */
  addPartitionSpec(spec: PartitionSpec): this {
    const existing = this.md['partition-specs'].find((s) => specsEquivalent(s, spec));
    if (existing) {
      this.lastAddedSpecId = existing['spec-id'];
      return this;
    }
    const id = this.md['partition-specs'].reduce((m, s) => Math.max(m, s['spec-id'] + 1), 0);
    let last = this.md['last-partition-id'];
    const known = this.md['partition-specs'].flatMap((s) => s.fields);
    const fields = spec.fields.map((f) => {
      const same = known.find((k) => k['source-id'] === f['source-id'] && k.transform === f.transform);
      if (same) return { ...f, 'field-id': same['field-id'] };
      if (f['field-id'] > last) {
        last = f['field-id'];
        return f;
      }
      return { ...f, 'field-id': ++last };
    });
    const added: PartitionSpec = { 'spec-id': id, fields };
    const schema = this.md.schemas.find((s) => s['schema-id'] === this.md['current-schema-id']);
    if (!schema) bad('add-spec: the table has no current schema');
    try {
      validatePartitionSpec(added, schema);
    } catch (e) {
      if (e instanceof IcebergError) bad(`add-spec: ${e.message}`);
      throw e;
    }
    for (const f of fields) if (f.transform !== 'void' && !/^(identity|bucket\[\d+\]|truncate\[\d+\]|year|month|day|hour)$/.test(f.transform)) bad(`add-spec: transform '${f.transform}' is unknown here; writers must not use unknown transforms`);
    this.md['partition-specs'] = [...this.md['partition-specs'], added];
    this.md['last-partition-id'] = Math.max(this.md['last-partition-id'], last);
    this.lastAddedSpecId = id;
    this.changes.push({ action: 'add-spec', spec: added });
    return this;
  }

  setDefaultPartitionSpec(specId: number): this {
    const id = specId === -1 ? this.lastAddedSpecId : specId;
    if (id === undefined) bad('set-default-spec -1: no spec was added in this change set');
    if (!this.md['partition-specs'].some((s) => s['spec-id'] === id)) bad(`set-default-spec: spec ${id} does not exist`);
    if (id === this.md['default-spec-id']) return this;
    this.md['default-spec-id'] = id;
    this.changes.push({ action: 'set-default-spec', 'spec-id': id === this.lastAddedSpecId ? -1 : id });
    return this;
  }

  addSortOrder(order: SortOrder): this {
    const existing = this.md['sort-orders'].find((o) => sortOrdersEquivalent(o, order));
    if (existing) {
      this.lastAddedOrderId = existing['order-id'];
      return this;
    }
    const id = order.fields.length === 0 ? 0 : this.md['sort-orders'].reduce((m, o) => Math.max(m, o['order-id'] + 1), 1);
    const added: SortOrder = { 'order-id': id, fields: order.fields };
    const schema = this.md.schemas.find((s) => s['schema-id'] === this.md['current-schema-id']);
    if (!schema) bad('add-sort-order: the table has no current schema');
    try {
      validateSortOrder(added, schema);
    } catch (e) {
      if (e instanceof IcebergError) bad(`add-sort-order: ${e.message}`);
      throw e;
    }
    this.md['sort-orders'] = [...this.md['sort-orders'], added];
    this.lastAddedOrderId = id;
    this.changes.push({ action: 'add-sort-order', 'sort-order': added });
    return this;
  }

  setDefaultSortOrder(orderId: number): this {
    const id = orderId === -1 ? this.lastAddedOrderId : orderId;
    if (id === undefined) bad('set-default-sort-order -1: no sort order was added in this change set');
    if (!this.md['sort-orders'].some((o) => o['order-id'] === id)) bad(`set-default-sort-order: sort order ${id} does not exist`);
    if (id === this.md['default-sort-order-id']) return this;
    this.md['default-sort-order-id'] = id;
    this.changes.push({ action: 'set-default-sort-order', 'sort-order-id': id === this.lastAddedOrderId ? -1 : id });
    return this;
  }

  /**
   * Adds a snapshot (not yet referenced by any branch: follow with `setRef` or use `setBranchSnapshot`).
   * Its sequence number must be above last-sequence-number, its parent known, its id new; in v3 its
   * first-row-id must equal next-row-id, which then grows by added-rows.
   */
  addSnapshot(s: Snapshot): this {
    const id = s['snapshot-id'];
    if (this.md.snapshots.some((x) => x['snapshot-id'] === id)) bad(`add-snapshot: snapshot ${id} already exists`);
    if (this.md['format-version'] >= 2 && s['sequence-number'] <= this.md['last-sequence-number'] && s['parent-snapshot-id'] !== undefined) {
      bad(`add-snapshot: snapshot ${id} has sequence-number ${s['sequence-number']}, not above last-sequence-number ${this.md['last-sequence-number']}`);
    }
    if (s['schema-id'] !== undefined && !this.md.schemas.some((x) => x['schema-id'] === s['schema-id'])) bad(`add-snapshot: snapshot ${id} has unknown schema-id ${s['schema-id']}`);
    if (this.md['format-version'] >= 3) {
      if (s['first-row-id'] === undefined || s['added-rows'] === undefined) bad(`add-snapshot: v3 snapshot ${id} needs first-row-id and added-rows`);
      if (s['first-row-id'] < (this.md['next-row-id'] ?? 0)) bad(`add-snapshot: snapshot ${id} first-row-id ${s['first-row-id']} is below next-row-id ${this.md['next-row-id']}`);
      this.md['next-row-id'] = s['first-row-id'] + s['added-rows'];
    }
    this.md.snapshots = [...this.md.snapshots, s];
    this.md['last-sequence-number'] = Math.max(this.md['last-sequence-number'], s['sequence-number']);
    this.md['last-updated-ms'] = Math.max(this.md['last-updated-ms'], s['timestamp-ms']);
    this.snapshotsChanged = true;
    this.changes.push({ action: 'add-snapshot', snapshot: s });
    return this;
  }

  /** Points a branch or tag at a snapshot; moving `main` also moves current-snapshot-id and the snapshot log. */
  setRef(name: string, ref: SnapshotRef): this {
    const snap = this.md.snapshots.find((x) => x['snapshot-id'] === ref['snapshot-id']);
    if (!snap) bad(`set-snapshot-ref: ref '${name}' points at snapshot ${ref['snapshot-id']}, which does not exist`);
    if (name === MAIN_BRANCH && ref.type !== 'branch') bad("set-snapshot-ref: 'main' must be a branch");
    const old = this.md.refs[name];
    if (old && JSON.stringify(old, big) === JSON.stringify(ref, big)) return this;
    this.md.refs = { ...this.md.refs, [name]: ref };
    if (name === MAIN_BRANCH) {
      this.md['current-snapshot-id'] = ref['snapshot-id'];
      const ts = this.snapshotsChanged && this.changes.some((c) => c.action === 'add-snapshot' && c.snapshot['snapshot-id'] === ref['snapshot-id']) ? snap['timestamp-ms'] : this.now();
      this.md['last-updated-ms'] = Math.max(this.md['last-updated-ms'], ts);
      this.md['snapshot-log'] = [...this.md['snapshot-log'], { 'snapshot-id': ref['snapshot-id'], 'timestamp-ms': this.md['last-updated-ms'] }];
    }
    this.changes.push({ action: 'set-snapshot-ref', 'ref-name': name, ...ref });
    return this;
  }

  /** Adds the snapshot and moves the branch (default `main`) to it: a normal commit. */
  setBranchSnapshot(s: Snapshot, branch = MAIN_BRANCH): this {
    const old = this.md.refs[branch];
    return this.addSnapshot(s).setRef(branch, { ...(old ?? {}), 'snapshot-id': s['snapshot-id'], type: 'branch' });
  }

  /** Removes snapshots (expiry); refs pointing at them are removed too, and the snapshot log is trimmed. */
  removeSnapshots(ids: readonly bigint[]): this {
    const gone = new Set(ids);
    const before = this.md.snapshots.length;
    this.md.snapshots = this.md.snapshots.filter((s) => !gone.has(s['snapshot-id']));
    if (this.md.snapshots.length === before) return this;
    for (const [name, r] of Object.entries(this.md.refs)) if (gone.has(r['snapshot-id'])) this.removeRef(name);
    // Spec: "all entries before a snapshot that has expired should be removed".
    const log = this.md['snapshot-log'];
    let lastGone = -1;
    log.forEach((e, i) => {
      if (gone.has(e['snapshot-id'])) lastGone = i;
    });
    this.md['snapshot-log'] = log.slice(lastGone + 1);
    this.changes.push({ action: 'remove-snapshots', 'snapshot-ids': [...ids] });
    return this;
  }

  removeRef(name: string): this {
    if (this.md.refs[name] === undefined) return this;
    const { [name]: _removed, ...rest } = this.md.refs;
    this.md.refs = rest;
    if (name === MAIN_BRANCH) this.md['current-snapshot-id'] = undefined;
    this.changes.push({ action: 'remove-snapshot-ref', 'ref-name': name });
    return this;
  }

  setLocation(location: string): this {
    if (location === '') bad('set-location: location must not be empty');
    const l = location.replace(/\/+$/, '');
    if (l === this.md.location && this.changes.some((c) => c.action === 'set-location')) return this;
    if (l === this.md.location && this.md.schemas.length > 0 && !this.changes.some((c) => c.action === 'assign-uuid')) return this;
    this.md.location = l;
    this.changes.push({ action: 'set-location', location: l });
    return this;
  }

  setProperties(updates: Readonly<Record<string, string>>): this {
    for (const [k, v] of Object.entries(updates)) if (typeof v !== 'string') bad(`set-properties: property '${k}' must be a string`);
    if (Object.keys(updates).length === 0) return this;
    this.md.properties = { ...this.md.properties, ...updates };
    this.changes.push({ action: 'set-properties', updates: { ...updates } });
    return this;
  }

  removeProperties(removals: readonly string[]): this {
    if (removals.length === 0) return this;
    const props = { ...this.md.properties };
    for (const k of removals) delete props[k];
    this.md.properties = props;
    this.changes.push({ action: 'remove-properties', removals: [...removals] });
    return this;
  }

  /**
   * The new metadata and the changes that produced it. When anything changed, last-updated-ms moves to now
   * (never backwards) and the previous metadata file, if given, is appended to metadata-log.
   */
  build(): BuildResult {
    const md = { ...this.md };
    if (this.changes.length > 0) {
      md['last-updated-ms'] = Math.max(md['last-updated-ms'], this.now());
      if (this.previousFile) md['metadata-log'] = [...md['metadata-log'], this.previousFile];
    }
    try {
      validateTableMetadata(md);
    } catch (e) {
      if (e instanceof IcebergError) bad(`the changes leave invalid metadata: ${e.message}`);
      throw e;
    }
    return { metadata: md, changes: [...this.changes] };
  }
}

const big = (_k: string, v: unknown): unknown => (typeof v === 'bigint' ? v.toString() : v);

function* flatIds(schema: Schema): Generator<number> {
  // Same traversal order as assignFreshIds: a struct's fields first, then their children.
  const visit = function* (t: Schema['fields'][number]['type']): Generator<number> {
    if (typeof t === 'string') return;
    if (t.type === 'struct') {
      for (const f of t.fields) yield f.id;
      for (const f of t.fields) yield* visit(f.type);
    } else if (t.type === 'list') {
      yield t['element-id'];
      yield* visit(t.element);
    } else {
      yield t['key-id'];
      yield t['value-id'];
      yield* visit(t.key);
      yield* visit(t.value);
    }
  };
  yield* visit(schema);
}
