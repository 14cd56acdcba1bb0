/**
 * DescribeUserScramCredentials (50) and AlterUserScramCredentials (51), as `kafka-configs --entity-type
 * users --alter --add-config 'SCRAM-SHA-512=[password=...]'` and `--describe` use them. The client salts and
 * hashes the password (Hi(password, salt, i)); the broker derives StoredKey and ServerKey from that and keeps
 * only those, the salt and the iteration count, durably in the metadata store. Describe returns mechanisms
 * and iterations, never key material. Per-user errors follow Kafka's ControllerApis answers.
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import type { MetadataStore, ScramCredentialRecord } from '../metadata/metadata-store.js';
import { credentialFromSalted, SCRAM_MAX_ITERATIONS, SCRAM_MECHANISMS, SCRAM_MIN_ITERATIONS, scramMechanismById } from '../security/scram.js';
import type { Logger } from '../logger.js';
import { allowedOnCluster } from '../security/acls/access.js';
import type { ApiHandler, Body, HandlerContext } from './handler.js';

type Metadata = Pick<MetadataStore, 'listScramCredentials' | 'getScramCredential' | 'alterScramCredentials'>;

export class DescribeUserScramCredentialsHandler implements ApiHandler {
  readonly apiKey = 50;
  readonly minVersion = 0;
  readonly maxVersion = 0;

  constructor(private readonly metadata: Metadata) {}

  handle(body: Body, ctx: HandlerContext): Body {
    // DESCRIBE on the cluster, as Kafka asks.
    if (!allowedOnCluster(ctx, 'DESCRIBE')) return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: 'The principal may not describe SCRAM credentials; grant DESCRIBE on the cluster.', results: [] };
    const all = this.metadata.listScramCredentials();
    const infos = (user: string) => all.filter((c) => c.user === user).map((c) => ({ mechanism: SCRAM_MECHANISMS[c.mechanism].id, iterations: c.iterations }));
    const requested = body.users as { name: string }[] | null;
    if (requested === null || requested.length === 0) {
      const users = [...new Set(all.map((c) => c.user))].sort();
      return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, results: users.map((user) => ({ user, errorCode: ErrorCode.NONE, errorMessage: null, credentialInfos: infos(user) })) };
    }
    const counts = new Map<string, number>();
    for (const u of requested) counts.set(u.name, (counts.get(u.name) ?? 0) + 1);
    const results = [...counts.keys()].map((user) => {
      if ((counts.get(user) ?? 0) > 1) return { user, errorCode: ErrorCode.DUPLICATE_RESOURCE, errorMessage: `Cannot describe SCRAM credentials for the same user twice in a single request: ${user}`, credentialInfos: [] };
      const found = infos(user);
      if (found.length === 0) return { user, errorCode: ErrorCode.RESOURCE_NOT_FOUND, errorMessage: `Attempt to describe a user credential that does not exist: ${user}`, credentialInfos: [] };
      return { user, errorCode: ErrorCode.NONE, errorMessage: null, credentialInfos: found };
    });
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, results };
  }
}

interface Deletion {
  name: string;
  mechanism: number;
}
interface Upsertion extends Deletion {
  iterations: number;
  salt: Buffer;
  saltedPassword: Buffer;
}

type Result = { user: string; errorCode: number; errorMessage: string | null };

export class AlterUserScramCredentialsHandler implements ApiHandler {
  readonly apiKey = 51;
  readonly minVersion = 0;
  readonly maxVersion = 0;

  constructor(
    private readonly metadata: Metadata,
    private readonly log: Logger,
  ) {}

  async handle(body: Body, ctx: HandlerContext): Promise<Body> {
    const deletions = (body.deletions as Deletion[]) ?? [];
    const upsertions = (body.upsertions as Upsertion[]) ?? [];
    // ALTER on the cluster, as Kafka asks.
    if (!allowedOnCluster(ctx, 'ALTER')) {
      const users = [...new Set([...deletions, ...upsertions].map((o) => o.name))];
      return { throttleTimeMs: 0, results: users.map((user) => ({ user, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: 'The principal may not alter SCRAM credentials; grant ALTER on the cluster.' })) };
    }
    const errors = new Map<string, Result>();
    const fail = (user: string, errorCode: number, errorMessage: string) => {
      if (!errors.has(user)) errors.set(user, { user, errorCode, errorMessage });
    };
    const seen = new Set<string>();
    for (const op of [...deletions, ...upsertions]) {
      const key = `${op.mechanism}\0${op.name}`;
      if (seen.has(key)) fail(op.name, ErrorCode.DUPLICATE_RESOURCE, `A user credential cannot be altered twice in the same request: ${op.name}`);
      seen.add(key);
      if (op.name === '') fail(op.name, ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Username must not be empty');
      if (!scramMechanismById(op.mechanism)) fail(op.name, ErrorCode.UNSUPPORTED_SASL_MECHANISM, `Unknown SCRAM mechanism ${op.mechanism}; use 1 (SCRAM-SHA-256) or 2 (SCRAM-SHA-512)`);
    }
    for (const u of upsertions) {
      if (u.iterations < SCRAM_MIN_ITERATIONS) fail(u.name, ErrorCode.UNACCEPTABLE_CREDENTIAL, `Too few iterations: ${u.iterations}; use at least ${SCRAM_MIN_ITERATIONS}`);
      if (u.iterations > SCRAM_MAX_ITERATIONS) fail(u.name, ErrorCode.UNACCEPTABLE_CREDENTIAL, `Too many iterations: ${u.iterations}; use at most ${SCRAM_MAX_ITERATIONS}`);
      const m = scramMechanismById(u.mechanism);
      if (m && u.saltedPassword.length !== SCRAM_MECHANISMS[m].bytes) fail(u.name, ErrorCode.UNACCEPTABLE_CREDENTIAL, `The salted password of ${m} must be ${SCRAM_MECHANISMS[m].bytes} bytes`);
      if (u.salt.length === 0) fail(u.name, ErrorCode.UNACCEPTABLE_CREDENTIAL, 'The salt must not be empty');
    }
    for (const d of deletions) {
      const m = scramMechanismById(d.mechanism);
      if (m && !this.metadata.getScramCredential(d.name, m)) fail(d.name, ErrorCode.RESOURCE_NOT_FOUND, `Attempt to delete a user credential that does not exist: ${d.name}`);
    }
    const ok = (name: string) => !errors.has(name);
    const upserts: ScramCredentialRecord[] = upsertions.filter((u) => ok(u.name)).map((u) => {
      const mechanism = scramMechanismById(u.mechanism) as ScramCredentialRecord['mechanism'];
      return { user: u.name, mechanism, ...credentialFromSalted(mechanism, u.saltedPassword, u.salt, u.iterations) };
    });
    const dels = deletions.filter((d) => ok(d.name)).map((d) => ({ user: d.name, mechanism: scramMechanismById(d.mechanism) as ScramCredentialRecord['mechanism'] }));
    const users = [...new Set([...deletions, ...upsertions].map((o) => o.name))];
    if (upserts.length > 0 || dels.length > 0) {
      try {
        await this.metadata.alterScramCredentials(upserts, dels);
      } catch (err) {
        this.log.error('could not store SCRAM credentials', { err });
        for (const u of users) fail(u, ErrorCode.UNKNOWN_SERVER_ERROR, 'The credentials could not be stored; see the broker log and retry.');
      }
    }
    this.log.info('SCRAM credentials altered', { upserted: upserts.map((u) => `${u.user}/${u.mechanism}`), deleted: dels.map((d) => `${d.user}/${d.mechanism}`) });
    return { throttleTimeMs: 0, results: users.map((u) => errors.get(u) ?? { user: u, errorCode: ErrorCode.NONE, errorMessage: null }) };
  }
}
