/**
 * The server side of a SASL mechanism: it takes the client's tokens one at a time and answers each, until
 * the exchange is done (then `principal` names the user) or fails with a SaslAuthenticationError. The
 * error's message is for the broker's debug log only; clients get one fixed message per mechanism, as Kafka
 * answers, so an answer never tells whether the user exists.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

export class SaslAuthenticationError extends Error {
  readonly code = 'SASL_AUTHENTICATION_FAILED';
  constructor(message: string) {
    super(message);
    this.name = 'SaslAuthenticationError';
  }
}

export interface SaslServer {
  readonly mechanism: string;
  /** The authenticated user name once `step` has returned done. */
  readonly principal: string | undefined;
  step(token: Buffer): { response: Buffer; done: boolean };
}

/** Looks up the password of a PLAIN user; undefined for an unknown user. */
export type PlainUsers = (user: string) => string | undefined;

export function sameSecret(a: string, b: string): boolean {
  // Hash first so that the comparison takes the same time whatever the lengths.
  const ha = createHash('sha256').update(a, 'utf8').digest();
  const hb = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(ha, hb);
}

/** PLAIN (RFC 4616): one message, `authzid NUL user NUL password`. */
export class PlainServer implements SaslServer {
  readonly mechanism = 'PLAIN';
  private user: string | undefined;

  constructor(private readonly users: PlainUsers) {}

  get principal(): string | undefined {
    return this.user;
  }

  step(token: Buffer): { response: Buffer; done: boolean } {
    if (this.user !== undefined) throw new SaslAuthenticationError('PLAIN exchange already complete');
    const parts = token.toString('utf8').split('\0');
    if (parts.length !== 3) throw new SaslAuthenticationError('malformed PLAIN message: expected authzid NUL user NUL password');
    const [authzid = '', user = '', password = ''] = parts;
    if (user === '' || password === '') throw new SaslAuthenticationError('PLAIN message lacks a user or a password');
    if (authzid !== '' && authzid !== user) throw new SaslAuthenticationError('authorization id differs from the user');
    const expected = this.users(user);
    // Compare against a dummy for unknown users too, so that the time taken does not tell who exists.
    const ok = sameSecret(password, expected ?? '\0unknown-user\0');
    if (!ok || expected === undefined) throw new SaslAuthenticationError('invalid credentials');
    this.user = user;
    return { response: Buffer.alloc(0), done: true };
  }
}

/**
 * Parses PLAIN users from Kafka's JAAS value, `org.apache.kafka.common.security.plain.PlainLoginModule
 * required username="admin" password="x" user_admin="x" user_alice="y";` (the user_<name> options are the
 * users), or from a users file of `user=password` lines. Throws with a message that names no password.
 */
export function parsePlainJaas(value: string): Map<string, string> {
  const users = new Map<string, string>();
  const body = value.trim().replace(/;\s*$/, '');
  const m = /^(\S+)\s+(required|requisite|sufficient|optional)\b(.*)$/s.exec(body);
  if (!m || !(m[1] ?? '').endsWith('PlainLoginModule')) {
    throw new Error('sasl.plain.jaas.config must look like org.apache.kafka.common.security.plain.PlainLoginModule required user_<name>="<password>" ...;');
  }
  const options = m[3] ?? '';
  const re = /\s*([A-Za-z0-9_.-]+)\s*=\s*"((?:[^"\\]|\\.)*)"/gy;
  let opt: RegExpExecArray | null;
  let at = 0;
  while ((opt = re.exec(options)) !== null) {
    at = re.lastIndex;
    const key = opt[1] ?? '';
    if (key.startsWith('user_')) users.set(key.slice(5), (opt[2] ?? '').replace(/\\(.)/g, '$1'));
  }
  if (options.slice(at).trim() !== '') throw new Error('sasl.plain.jaas.config: options must be name="value" pairs');
  return users;
}

export function parsePlainUsersFile(text: string, path: string): Map<string, string> {
  const users = new Map<string, string>();
  text.split(/\r?\n/).forEach((line, i) => {
    const t = line.trim();
    if (t === '' || t.startsWith('#')) return;
    const eq = t.indexOf('=');
    if (eq <= 0) throw new Error(`sasl.plain.users.file ${path}:${i + 1}: expected user=password`);
    users.set(t.slice(0, eq).trim(), t.slice(eq + 1));
  });
  return users;
}
