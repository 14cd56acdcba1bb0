/**
 * The registry's in-memory state, rebuilt by applying `_schemas` records in log order and kept current by
 * applying each record after it is durable. It answers every read synchronously, and is the
 * `SchemaRegistryView` that in-process readers (tiering) use.
 */
import { DEFAULT_COMPATIBILITY, DEFAULT_MODE, type CompatibilityLevel, type Mode, type SchemaContent, type SchemaRegistryView, type SubjectVersion } from './model.js';
import type { RegistryRecord } from './records.js';

/** What decides whether two registrations are the same schema (and so share an id). */
export function contentKey(c: Pick<SchemaContent, 'schemaType' | 'schema' | 'references'>): string {
  return JSON.stringify([c.schemaType, c.schema, c.references.map((r) => [r.name, r.subject, r.version])]);
}

export class RegistryState implements SchemaRegistryView {
  /** subject -> version -> registered version (soft-deleted ones included). */
  private readonly subjects = new Map<string, Map<number, SubjectVersion>>();
  /** id -> every (subject, version) using it. */
  private readonly byId = new Map<number, Map<string, SubjectVersion>>();
  private readonly idByContent = new Map<string, number>();
  private readonly configs = new Map<string | null, CompatibilityLevel>();
  private readonly modes = new Map<string | null, Mode>();
  private readonly listeners = new Set<() => void>();
  private highWater = 0;

  /** The largest id ever given (also of permanently deleted schemas). */
  get maxId(): number {
    return this.highWater;
  }

  apply(r: RegistryRecord): void {
    switch (r.kind) {
      case 'SCHEMA': {
        const versions = this.subjects.get(r.subject);
        const old = versions?.get(r.version);
        if (old) this.unindex(old);
        if (r.value === null) {
          versions?.delete(r.version);
          if (versions?.size === 0) this.subjects.delete(r.subject);
          return;
        }
        let vs = versions;
        if (!vs) {
          vs = new Map();
          this.subjects.set(r.subject, vs);
        }
        vs.set(r.version, r.value);
        let users = this.byId.get(r.value.id);
        if (!users) {
          users = new Map();
          this.byId.set(r.value.id, users);
        }
        users.set(`${r.subject}\u0000${r.version}`, r.value);
        this.idByContent.set(contentKey(r.value), r.value.id);
        this.highWater = Math.max(this.highWater, r.value.id);
        return;
      }
      case 'CONFIG':
        if (r.value === null) this.configs.delete(r.subject);
        else this.configs.set(r.subject, r.value);
        return;
      case 'MODE':
        if (r.value === null) this.modes.delete(r.subject);
        else this.modes.set(r.subject, r.value);
        return;
      case 'ID_HIGH_WATER':
        this.highWater = Math.max(this.highWater, r.value);
        return;
    }
  }

  /** Tells listeners that a change was applied. */
  changed(): void {
    for (const l of this.listeners) l();
  }

  private unindex(v: SubjectVersion): void {
    const users = this.byId.get(v.id);
    users?.delete(`${v.subject}\u0000${v.version}`);
    if (users?.size === 0) {
      this.byId.delete(v.id);
      this.idByContent.delete(contentKey(v));
    }
  }

  // -- reads ------------------------------------------------------------------------------------------

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  schemaById(id: number): SchemaContent | undefined {
    const users = this.byId.get(id);
    if (!users) return undefined;
    const first = users.values().next().value as SubjectVersion;
    return { schemaType: first.schemaType, schema: first.schema, references: first.references, ...(first.metadata !== undefined ? { metadata: first.metadata } : {}), ...(first.ruleSet !== undefined ? { ruleSet: first.ruleSet } : {}) };
  }

  idOfContent(c: Pick<SchemaContent, 'schemaType' | 'schema' | 'references'>): number | undefined {
    return this.idByContent.get(contentKey(c));
  }

  versionsOfId(id: number): readonly SubjectVersion[] {
    return [...(this.byId.get(id)?.values() ?? [])].sort((a, b) => (a.subject < b.subject ? -1 : a.subject > b.subject ? 1 : a.version - b.version));
  }

  /** Every version of the subject, oldest first (soft-deleted ones only when asked). */
  versions(subject: string, includeDeleted = false): SubjectVersion[] {
    const vs = [...(this.subjects.get(subject)?.values() ?? [])].sort((a, b) => a.version - b.version);
    return includeDeleted ? vs : vs.filter((v) => !v.deleted);
  }

  latestVersion(subject: string, includeDeleted = false): SubjectVersion | undefined {
    return this.versions(subject, includeDeleted).at(-1);
  }

  subjectVersion(subject: string, version: number, includeDeleted = false): SubjectVersion | undefined {
    const v = this.subjects.get(subject)?.get(version);
    return v && (includeDeleted || !v.deleted) ? v : undefined;
  }

  /** Subjects with a live version (or any version when `includeDeleted`), sorted. */
  subjectNames(includeDeleted = false): string[] {
    return [...this.subjects.keys()].filter((s) => this.versions(s, includeDeleted).length > 0).sort();
  }

  hasSubject(subject: string): boolean {
    return (this.subjects.get(subject)?.size ?? 0) > 0;
  }

  /** Ids of schemas that reference this subject version. */
  referencedBy(subject: string, version: number, includeDeleted = false): number[] {
    const ids = new Set<number>();
    for (const vs of this.subjects.values()) {
      for (const v of vs.values()) {
        if ((includeDeleted || !v.deleted) && v.references.some((r) => r.subject === subject && r.version === version)) ids.add(v.id);
      }
    }
    return [...ids].sort((a, b) => a - b);
  }

  configOf(subject: string | null): CompatibilityLevel | undefined {
    return this.configs.get(subject);
  }

  /** The level that applies to a subject: its own, else the global one, else BACKWARD. */
  effectiveCompatibility(subject: string | null): CompatibilityLevel {
    return (subject !== null ? this.configs.get(subject) : undefined) ?? this.configs.get(null) ?? DEFAULT_COMPATIBILITY;
  }

  modeOf(subject: string | null): Mode | undefined {
    return this.modes.get(subject);
  }

  effectiveMode(subject: string | null): Mode {
    return (subject !== null ? this.modes.get(subject) : undefined) ?? this.modes.get(null) ?? DEFAULT_MODE;
  }
}
