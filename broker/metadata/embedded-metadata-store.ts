/**
 * MetadataStore kept in `<log.dirs>/__cluster_metadata/metadata.json`. Every change rewrites the file
 * atomically (write to a temp file, fsync, rename, fsync the directory) before the change is reported, so
 * a created topic, an allocated producer id or a created ACL survives kill -9. Changes are serialized.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, open, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { MetadataError, type AclRecord, type ClientQuotaRecord, type MetadataStore, type ScramCredentialRecord, type TopicRecord } from './metadata-store.js';

interface StoredTopic {
  name: string;
  id: string;
  partitions: number;
  configs: Record<string, string>;
  createdAtMs: number;
}

interface StoredState {
  version: 1;
  clusterId: string;
  nextProducerId: string;
  topics: StoredTopic[];
  /** SCRAM credentials (salt, StoredKey and ServerKey in base64; never a password). Absent before security. */
  scramCredentials?: StoredScram[];
  /** ACL bindings with Kafka's codes. Absent before ACLs. */
  acls?: AclRecord[];
  /** Client quotas (kafka-configs --entity-type users|clients|ips). Absent before quotas. */
  clientQuotas?: ClientQuotaRecord[];
}

interface StoredScram {
  user: string;
  mechanism: ScramCredentialRecord['mechanism'];
  salt: string;
  iterations: number;
  storedKey: string;
  serverKey: string;
}

const quotaKey = (r: ClientQuotaRecord) => JSON.stringify(r.entity.map((p) => [p.entityType, p.entityName]));

const freezeQuota = (r: ClientQuotaRecord): ClientQuotaRecord =>
  Object.freeze({ entity: Object.freeze(r.entity.map((p) => Object.freeze({ entityType: p.entityType, entityName: p.entityName }))), values: Object.freeze({ ...r.values }) });

const scramKey = (user: string, mechanism: string) => `${mechanism}\0${user}`;

/** Producer ids are reserved in blocks so that most allocations need no write. */
const PRODUCER_ID_BLOCK = 1000n;

export class EmbeddedMetadataStore implements MetadataStore {
  private readonly topics = new Map<string, TopicRecord>();
  private scram = new Map<string, ScramCredentialRecord>();
  private acls: readonly AclRecord[] = [];
  private quotas = new Map<string, ClientQuotaRecord>();
  private chain: Promise<unknown> = Promise.resolve();
  private producerIdNext = 0n;
  private producerIdLimit = 0n;

  private constructor(
    private readonly dir: string,
    readonly clusterId: string,
    private reservedProducerIds: bigint,
  ) {
    this.producerIdNext = reservedProducerIds;
    this.producerIdLimit = reservedProducerIds;
  }

  static async open(logDir: string, configuredClusterId = ''): Promise<EmbeddedMetadataStore> {
    const dir = join(logDir, '__cluster_metadata');
    await mkdir(dir, { recursive: true });
    let state: StoredState | undefined;
    try {
      state = JSON.parse(await readFile(join(dir, 'metadata.json'), 'utf8')) as StoredState;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
        throw new MetadataError('IO_ERROR', `cannot read cluster metadata in ${dir}: ${(err as Error).message}; restore the file or move the data directory aside`);
      }
    }
    if (state && configuredClusterId !== '' && state.clusterId !== configuredClusterId) {
      throw new MetadataError('IO_ERROR', `data directory ${logDir} belongs to cluster ${state.clusterId}, but cluster.id is ${configuredClusterId}`);
    }
    const clusterId = state?.clusterId ?? (configuredClusterId || randomBytes(16).toString('base64url').slice(0, 22));
    const store = new EmbeddedMetadataStore(dir, clusterId, BigInt(state?.nextProducerId ?? '0'));
    for (const t of state?.topics ?? []) {
      store.topics.set(t.name, Object.freeze({ ...t, id: Buffer.from(t.id, 'hex'), configs: Object.freeze({ ...t.configs }) }));
    }
    for (const c of state?.scramCredentials ?? []) {
      const record = Object.freeze({ ...c, salt: Buffer.from(c.salt, 'base64'), storedKey: Buffer.from(c.storedKey, 'base64'), serverKey: Buffer.from(c.serverKey, 'base64') });
      store.scram.set(scramKey(c.user, c.mechanism), record);
    }
    store.acls = Object.freeze((state?.acls ?? []).map((a) => Object.freeze({ ...a })));
    for (const q of state?.clientQuotas ?? []) store.quotas.set(quotaKey(q), freezeQuota(q));
    if (!state) await store.persist();
    return store;
  }

  listTopics(): readonly TopicRecord[] {
    return [...this.topics.values()];
  }

  getTopic(name: string): TopicRecord | undefined {
    return this.topics.get(name);
  }

  getTopicById(id: Buffer): TopicRecord | undefined {
    for (const t of this.topics.values()) if (t.id.equals(id)) return t;
    return undefined;
  }

  createTopic(name: string, partitions: number, configs: Readonly<Record<string, string>>): Promise<TopicRecord> {
    return this.serialize(async () => {
      if (this.topics.has(name)) throw new MetadataError('TOPIC_EXISTS', `topic '${name}' already exists`);
      const record: TopicRecord = Object.freeze({
        name,
        id: Buffer.from(randomUUID().replace(/-/g, ''), 'hex'),
        partitions,
        configs: Object.freeze({ ...configs }),
        createdAtMs: Date.now(),
      });
      this.topics.set(name, record);
      await this.persistOrRollback(() => this.topics.delete(name));
      return record;
    });
  }

  deleteTopic(name: string): Promise<TopicRecord> {
    return this.serialize(async () => {
      const record = this.require(name);
      this.topics.delete(name);
      await this.persistOrRollback(() => this.topics.set(name, record));
      return record;
    });
  }

  setPartitionCount(name: string, partitions: number): Promise<TopicRecord> {
    return this.replace(name, (t) => ({ ...t, partitions }));
  }

  alterTopicConfigs(name: string, changes: Readonly<Record<string, string | null>>): Promise<TopicRecord> {
    return this.replace(name, (t) => {
      const configs: Record<string, string> = { ...t.configs };
      for (const [k, v] of Object.entries(changes)) {
        if (v === null) delete configs[k];
        else configs[k] = v;
      }
      return { ...t, configs: Object.freeze(configs) };
    });
  }

  listScramCredentials(): readonly ScramCredentialRecord[] {
    return [...this.scram.values()];
  }

  getScramCredential(user: string, mechanism: ScramCredentialRecord['mechanism']): ScramCredentialRecord | undefined {
    return this.scram.get(scramKey(user, mechanism));
  }

  alterScramCredentials(upserts: readonly ScramCredentialRecord[], deletions: readonly { user: string; mechanism: ScramCredentialRecord['mechanism'] }[]): Promise<void> {
    return this.serialize(async () => {
      const before = this.scram;
      const next = new Map(before);
      for (const d of deletions) next.delete(scramKey(d.user, d.mechanism));
      for (const u of upserts) next.set(scramKey(u.user, u.mechanism), Object.freeze({ ...u }));
      this.scram = next;
      await this.persistOrRollback(() => (this.scram = before));
    });
  }

  listAcls(): readonly AclRecord[] {
    return this.acls;
  }

  alterAcls(additions: readonly AclRecord[], removals: readonly AclRecord[]): Promise<void> {
    return this.serialize(async () => {
      const before = this.acls;
      const removed = new Set(removals);
      this.acls = Object.freeze([...before.filter((a) => !removed.has(a)), ...additions.map((a) => Object.freeze({ ...a }))]);
      await this.persistOrRollback(() => (this.acls = before));
    });
  }

  listClientQuotas(): readonly ClientQuotaRecord[] {
    return [...this.quotas.values()];
  }

  alterClientQuotas(records: readonly ClientQuotaRecord[]): Promise<void> {
    return this.serialize(async () => {
      const before = this.quotas;
      const next = new Map(before);
      for (const r of records) {
        if (Object.keys(r.values).length === 0) next.delete(quotaKey(r));
        else next.set(quotaKey(r), freezeQuota(r));
      }
      this.quotas = next;
      await this.persistOrRollback(() => (this.quotas = before));
    });
  }

  allocateProducerId(): Promise<bigint> {
    return this.serialize(async () => {
      if (this.producerIdNext >= this.producerIdLimit) {
        const previous = this.reservedProducerIds;
        this.reservedProducerIds = this.producerIdLimit + PRODUCER_ID_BLOCK;
        try {
          await this.persist();
        } catch (err) {
          this.reservedProducerIds = previous;
          throw err;
        }
        this.producerIdLimit = this.reservedProducerIds;
      }
      return this.producerIdNext++;
    });
  }

  async close(): Promise<void> {
    await this.chain.catch(() => undefined);
  }

  private require(name: string): TopicRecord {
    const t = this.topics.get(name);
    if (!t) throw new MetadataError('UNKNOWN_TOPIC', `topic '${name}' does not exist`);
    return t;
  }

  private replace(name: string, change: (t: TopicRecord) => TopicRecord): Promise<TopicRecord> {
    return this.serialize(async () => {
      const before = this.require(name);
      const after = Object.freeze(change(before));
      this.topics.set(name, after);
      await this.persistOrRollback(() => this.topics.set(name, before));
      return after;
    });
  }

  private serialize<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn, fn);
    this.chain = run.catch(() => undefined);
    return run;
  }

  private async persistOrRollback(rollback: () => void): Promise<void> {
    try {
      await this.persist();
    } catch (err) {
      rollback();
      throw err;
    }
  }

  private async persist(): Promise<void> {
    const state: StoredState = {
      version: 1,
      clusterId: this.clusterId,
      nextProducerId: this.reservedProducerIds.toString(),
      topics: [...this.topics.values()].map((t) => ({ ...t, id: t.id.toString('hex'), configs: { ...t.configs } })),
      ...(this.scram.size > 0
        ? {
            scramCredentials: [...this.scram.values()].map((c) => ({
              user: c.user,
              mechanism: c.mechanism,
              salt: c.salt.toString('base64'),
              iterations: c.iterations,
              storedKey: c.storedKey.toString('base64'),
              serverKey: c.serverKey.toString('base64'),
            })),
          }
        : {}),
      ...(this.acls.length > 0 ? { acls: this.acls.map((a) => ({ ...a })) } : {}),
      ...(this.quotas.size > 0 ? { clientQuotas: [...this.quotas.values()].map((q) => ({ entity: q.entity.map((p) => ({ ...p })), values: { ...q.values } })) } : {}),
    };
    const tmp = join(this.dir, 'metadata.json.tmp');
    // Owner-only: the file holds SCRAM StoredKeys and ServerKeys (not passwords, but not for everyone either).
    const fh = await open(tmp, 'w', 0o600);
    try {
      await fh.writeFile(JSON.stringify(state, null, 2));
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, join(this.dir, 'metadata.json'));
    const dh = await open(this.dir, 'r');
    try {
      await dh.sync();
    } finally {
      await dh.close();
    }
  }
}
