/**
 * The registry's operations with Confluent's rules: register (same schema again returns the same version;
 * the same content under another subject reuses the global id; ids are never reused), lookup, soft and
 * permanent deletes (permanent only after soft; a version other schemas reference cannot be deleted),
 * compatibility levels and modes (READONLY refuses writes; IMPORT skips compatibility checks and allows an
 * explicit id and version).
 *
 * Every change is computed against the state, written to the log, and applied only once durable; changes
 * run one at a time, so two registrations can never take the same id or version.
 */
import { checkCompatibility, type CompatibilityResult } from './compatibility.js';
import { invalidSchema, RegistryError, schemaNotFound, subjectNotFound, versionNotFound } from './errors.js';
import { SCHEMA_FORMATS, type ParsedSchema, type ResolvedReference } from './formats/index.js';
import type { CompatibilityLevel, Mode, SchemaContent, SchemaReference, SchemaType, SubjectVersion } from './model.js';
import { decodeRecord, encodeRecord, type RegistryRecord } from './records.js';
import type { RegistryLog } from './schema-log.js';
import { contentKey, RegistryState } from './state.js';

const CACHE_ENTRIES = 1000;

/** A schema as a request carries it. */
export interface SchemaRequest {
  readonly schema: string;
  readonly schemaType: SchemaType;
  readonly references: readonly SchemaReference[];
  readonly metadata?: unknown;
  readonly ruleSet?: unknown;
  /** IMPORT mode: the id and version to register under. */
  readonly id?: number;
  readonly version?: number;
}

/** A version selector from a path: a number, or 'latest' (also spelled -1). */
export type VersionSelector = number | 'latest';

export class SchemaStore {
  readonly state = new RegistryState();
  private queue: Promise<unknown> = Promise.resolve();
  private readonly rendered = new Map<string, string>();
  /** Parsed stored schemas: compatibility checks parse every earlier version, so each is parsed once. */
  private readonly parsed = new Map<string, ParsedSchema>();

  private constructor(private readonly log: RegistryLog) {}

  /** Replays the log into a fresh state. */
  static async open(log: RegistryLog): Promise<{ store: SchemaStore; records: number }> {
    const store = new SchemaStore(log);
    const records = await log.replay((key, value) => {
      const r = decodeRecord(key, value);
      if (r) store.state.apply(r);
    });
    return { store, records };
  }

  /** Runs a change alone: computes the records from the current state, makes them durable, applies them. */
  private change<T>(fn: () => { records: RegistryRecord[]; result: T }): Promise<T> {
    const run = this.queue.then(async () => {
      const { records, result } = fn();
      if (records.length > 0) {
        try {
          await this.log.append(records.map(encodeRecord));
        } catch (err) {
          throw new RegistryError('STORE_ERROR', `Error while writing to the schema registry's log: ${(err as Error).message}`, { cause: err });
        }
        for (const r of records) this.state.apply(r);
        this.state.changed();
      }
      return result;
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  // -- parsing ----------------------------------------------------------------------------------------

  /** Resolves references depth-first (dependencies before dependents), each once. */
  resolveReferences(refs: readonly SchemaReference[]): ResolvedReference[] {
    const out: ResolvedReference[] = [];
    const done = new Set<string>();
    const visit = (ref: SchemaReference, depth: number) => {
      if (depth > 64) throw invalidSchema('references nest more than 64 levels deep (a cycle?)');
      const target = ref.version === -1 ? this.state.latestVersion(ref.subject) : this.state.subjectVersion(ref.subject, ref.version, true);
      if (!target) throw invalidSchema(`reference '${ref.name}' names subject '${ref.subject}' version ${ref.version}, which does not exist`);
      const key = `${target.subject}\u0000${target.version}`;
      if (done.has(key)) return;
      done.add(key);
      for (const inner of target.references) visit(inner, depth + 1);
      out.push({ name: ref.name, schemaType: target.schemaType, schema: target.schema });
    };
    for (const r of refs) visit(r, 0);
    return out;
  }

  /** References as stored: version -1 (latest) pinned to the version it names now. */
  pinReferences(refs: readonly SchemaReference[]): SchemaReference[] {
    return refs.map((r) => (r.version !== -1 ? r : { ...r, version: this.state.latestVersion(r.subject)?.version ?? -1 }));
  }

  parse(req: Pick<SchemaRequest, 'schema' | 'schemaType' | 'references'>): ParsedSchema {
    return SCHEMA_FORMATS[req.schemaType].parse(req.schema, this.resolveReferences(req.references));
  }

  /**
   * The schema text to serve for `?format=`: the stored text, or for Protobuf the other form when asked
   * (`serialized`: base64 FileDescriptorProto; default: .proto text). Cached per content and format.
   */
  renderSchema(c: SchemaContent, format: string | undefined): string {
    const render = SCHEMA_FORMATS[c.schemaType].render;
    if (!render) return c.schema;
    const key = `${format ?? ''}\u0000${contentKey(c)}`;
    let text = this.rendered.get(key);
    if (text === undefined) {
      try {
        text = render(this.parseStored(c), format);
      } catch {
        text = c.schema; // a schema that no longer parses (a reference was deleted) is served as stored
      }
      remember(this.rendered, key, text);
    }
    return text;
  }

  /** A stored schema parsed (its references are pinned, so the result never changes), cached. */
  private parseStored(c: SchemaContent): ParsedSchema {
    const key = contentKey(c);
    let p = this.parsed.get(key);
    if (p === undefined) {
      p = this.parse(c);
      remember(this.parsed, key, p);
    }
    return p;
  }

  // -- registration -----------------------------------------------------------------------------------

  /** POST /subjects/{s}/versions: the id (and version) of the schema under the subject. */
  register(subject: string, req: SchemaRequest, normalize = false): Promise<SubjectVersion> {
    return this.change(() => {
      const mode = this.state.effectiveMode(subject);
      if (mode === 'READONLY' || mode === 'READONLY_OVERRIDE') throw new RegistryError('OPERATION_NOT_PERMITTED', `Subject ${subject} is in read-only mode`);
      const importing = mode === 'IMPORT';
      if ((req.id !== undefined && req.id >= 0) && !importing) throw new RegistryError('OPERATION_NOT_PERMITTED', `Subject ${subject} is not in import mode; registering with an explicit id needs IMPORT mode`);
      void normalize;
      const references = this.pinReferences(req.references);
      const parsed = this.parse({ ...req, references });
      const content = { schemaType: req.schemaType, schema: parsed.canonical, references };
      const live = this.state.versions(subject);
      const same = live.find((v) => v.schemaType === content.schemaType && v.schema === content.schema && sameRefs(v.references, content.references));
      if (same && (req.id === undefined || req.id < 0 || req.id === same.id)) return { records: [], result: same };

      const existingId = this.state.idOfContent(content);
      let id: number;
      if (importing && req.id !== undefined && req.id >= 0) {
        const holder = this.state.schemaById(req.id);
        if (holder && !(holder.schemaType === content.schemaType && holder.schema === content.schema && sameRefs(holder.references, content.references))) {
          throw new RegistryError('ID_DOES_NOT_MATCH', `Overwrite new schema with id ${req.id} is not permitted: id ${req.id} already holds a different schema`);
        }
        id = req.id;
      } else {
        id = existingId ?? this.state.maxId + 1;
      }
      if (!importing) {
        const result = checkCompatibility(SCHEMA_FORMATS[content.schemaType], this.state.effectiveCompatibility(subject), parsed, live.map((v) => this.parseStored(v)));
        if (!result.compatible) {
          throw new RegistryError('INCOMPATIBLE_SCHEMA', `Schema being registered is incompatible with an earlier schema for subject "${subject}", details: [${result.messages.join('; ')}]`);
        }
      }
      const all = this.state.versions(subject, true);
      let version = (all.at(-1)?.version ?? 0) + 1;
      if (importing && req.version !== undefined && req.version > 0) {
        const taken = this.state.subjectVersion(subject, req.version, true);
        if (taken) throw new RegistryError('OPERATION_NOT_PERMITTED', `Version ${req.version} of subject ${subject} already exists (schema id ${taken.id}); pick another version`);
        version = req.version;
      }
      const value: SubjectVersion = {
        subject,
        version,
        id,
        ...content,
        deleted: false,
        ...(req.metadata !== undefined && req.metadata !== null ? { metadata: req.metadata } : {}),
        ...(req.ruleSet !== undefined && req.ruleSet !== null ? { ruleSet: req.ruleSet } : {}),
      };
      return { records: [{ kind: 'SCHEMA', subject, version, value }], result: value };
    });
  }

  /** POST /subjects/{s}: the version of the subject holding this schema. */
  lookup(subject: string, req: Pick<SchemaRequest, 'schema' | 'schemaType' | 'references'>, includeDeleted: boolean): SubjectVersion {
    if (!this.state.hasSubject(subject) || this.state.versions(subject, includeDeleted).length === 0) throw subjectNotFound(subject);
    const references = this.pinReferences(req.references);
    const parsed = this.parse({ ...req, references });
    const found = this.state
      .versions(subject, includeDeleted)
      .find((v) => v.schemaType === req.schemaType && v.schema === parsed.canonical && sameRefs(v.references, references));
    if (!found) throw schemaNotFound();
    return found;
  }

  // -- reads with Confluent's errors ------------------------------------------------------------------

  getVersion(subject: string, selector: VersionSelector, includeDeleted: boolean): SubjectVersion {
    if (this.state.versions(subject, includeDeleted).length === 0) throw subjectNotFound(subject);
    const v = selector === 'latest' ? this.state.latestVersion(subject, includeDeleted) : this.state.subjectVersion(subject, selector, includeDeleted);
    if (!v) throw versionNotFound(selector === 'latest' ? 'latest' : selector);
    return v;
  }

  // -- compatibility ----------------------------------------------------------------------------------

  /** POST /compatibility/subjects/{s}/versions[/{v}]: against one version, or (no selector) as the level says. */
  testCompatibility(subject: string, selector: VersionSelector | undefined, req: Pick<SchemaRequest, 'schema' | 'schemaType' | 'references'>): CompatibilityResult {
    const parsed = this.parse(req);
    const level = this.state.effectiveCompatibility(subject);
    const live = this.state.versions(subject);
    if (selector === undefined) return checkCompatibility(SCHEMA_FORMATS[req.schemaType], level, parsed, live.map((v) => this.parseStored(v)));
    if (live.length === 0 && selector === 'latest') return { compatible: true, messages: [] };
    const target = this.getVersion(subject, selector, false);
    const single = level.replace('_TRANSITIVE', '') as CompatibilityLevel;
    return checkCompatibility(SCHEMA_FORMATS[req.schemaType], single, parsed, [this.parseStored(target)]);
  }

  // -- deletes ----------------------------------------------------------------------------------------

  /** DELETE /subjects/{s}: the versions deleted. */
  deleteSubject(subject: string, permanent: boolean): Promise<number[]> {
    return this.change(() => {
      this.checkWritable(subject);
      const all = this.state.versions(subject, true);
      if (all.length === 0) throw subjectNotFound(subject);
      const live = all.filter((v) => !v.deleted);
      if (!permanent && live.length === 0) throw new RegistryError('SUBJECT_SOFT_DELETED', `Subject '${subject}' was soft deleted.Set permanent=true to delete permanently`);
      if (permanent && live.length > 0) throw new RegistryError('SUBJECT_NOT_SOFT_DELETED', `Subject '${subject}' was not deleted first before being permanently deleted`);
      const targets = permanent ? all : live;
      for (const v of targets) this.checkNotReferenced(v, permanent);
      const records: RegistryRecord[] = targets.map((v) => ({ kind: 'SCHEMA', subject, version: v.version, value: permanent ? null : { ...v, deleted: true } }));
      if (permanent) {
        records.push({ kind: 'ID_HIGH_WATER', value: this.state.maxId });
        if (this.state.configOf(subject) !== undefined) records.push({ kind: 'CONFIG', subject, value: null });
        if (this.state.modeOf(subject) !== undefined) records.push({ kind: 'MODE', subject, value: null });
      }
      return { records, result: targets.map((v) => v.version) };
    });
  }

  /** DELETE /subjects/{s}/versions/{v}: the version deleted. */
  deleteVersion(subject: string, selector: VersionSelector, permanent: boolean): Promise<number> {
    return this.change(() => {
      this.checkWritable(subject);
      if (this.state.versions(subject, true).length === 0) throw subjectNotFound(subject);
      const v = selector === 'latest' ? this.state.latestVersion(subject, permanent) : this.state.subjectVersion(subject, selector, true);
      if (!v) throw versionNotFound(selector);
      if (!permanent && v.deleted) throw new RegistryError('VERSION_SOFT_DELETED', `Subject '${subject}' Version ${v.version} was soft deleted.Set permanent=true to delete permanently`);
      if (permanent && !v.deleted) throw new RegistryError('VERSION_NOT_SOFT_DELETED', `Subject '${subject}' Version ${v.version} was not deleted first before being permanently deleted`);
      this.checkNotReferenced(v, permanent);
      const records: RegistryRecord[] = [{ kind: 'SCHEMA', subject, version: v.version, value: permanent ? null : { ...v, deleted: true } }];
      if (permanent) records.push({ kind: 'ID_HIGH_WATER', value: this.state.maxId });
      return { records, result: v.version };
    });
  }

  private checkWritable(subject: string): void {
    const mode = this.state.effectiveMode(subject);
    if (mode === 'READONLY' || mode === 'READONLY_OVERRIDE') throw new RegistryError('OPERATION_NOT_PERMITTED', `Subject ${subject} is in read-only mode`);
  }

  private checkNotReferenced(v: SubjectVersion, includeDeleted: boolean): void {
    const by = this.state.referencedBy(v.subject, v.version, includeDeleted);
    if (by.length > 0) throw new RegistryError('REFERENCE_EXISTS', `One or more references exist to the schema {subject=${v.subject},version=${v.version}}: schema ids ${by.join(', ')}; delete those first`);
  }

  // -- config and mode --------------------------------------------------------------------------------

  setCompatibility(subject: string | null, level: CompatibilityLevel): Promise<CompatibilityLevel> {
    return this.change(() => ({ records: this.state.configOf(subject) === level ? [] : [{ kind: 'CONFIG', subject, value: level }], result: level }));
  }

  /** Removes a level; returns the one that applied before. */
  deleteCompatibility(subject: string | null): Promise<CompatibilityLevel> {
    return this.change(() => {
      if (subject !== null && !this.state.hasSubject(subject) && this.state.configOf(subject) === undefined) throw subjectNotFound(subject);
      const before = this.state.effectiveCompatibility(subject);
      return { records: this.state.configOf(subject) === undefined ? [] : [{ kind: 'CONFIG', subject, value: null }], result: before };
    });
  }

  setMode(subject: string | null, mode: Mode, force: boolean): Promise<Mode> {
    return this.change(() => {
      if (mode === 'IMPORT' && !force) {
        const nonEmpty = subject === null ? this.state.subjectNames(true).length > 0 : this.state.hasSubject(subject);
        if (nonEmpty) throw new RegistryError('OPERATION_NOT_PERMITTED', `Cannot import since found existing subjects${subject === null ? '' : ` (${subject})`}; set ?force=true to switch to IMPORT anyway`);
      }
      return { records: this.state.modeOf(subject) === mode ? [] : [{ kind: 'MODE', subject, value: mode }], result: mode };
    });
  }

  deleteMode(subject: string | null): Promise<Mode> {
    return this.change(() => {
      const before = this.state.effectiveMode(subject);
      return { records: this.state.modeOf(subject) === undefined ? [] : [{ kind: 'MODE', subject, value: null }], result: before };
    });
  }
}

/** Adds to a bounded cache, dropping the oldest entry when full. */
function remember<V>(cache: Map<string, V>, key: string, value: V): void {
  if (cache.size >= CACHE_ENTRIES) cache.delete(cache.keys().next().value as string);
  cache.set(key, value);
}

function sameRefs(a: readonly SchemaReference[], b: readonly SchemaReference[]): boolean {
  return a.length === b.length && a.every((r, i) => r.name === b[i]?.name && r.subject === b[i]?.subject && r.version === b[i]?.version);
}
