/**
 * SCRAM (RFC 5802, with SHA-256 per RFC 7677 and SHA-512 as Kafka adds it): the stored credential and the
 * server side of the exchange. The broker keeps only salt, iterations, StoredKey and ServerKey, never the
 * password: a leaked credential store does not let anyone log in, and the ServerKey lets the client check
 * that it talks to a broker that knows its credential (the server signature).
 */
import { createHash, createHmac, pbkdf2Sync, randomBytes, timingSafeEqual } from 'node:crypto';
import { SaslAuthenticationError, type SaslServer } from './sasl-mechanism.js';

export const SCRAM_MECHANISMS = { 'SCRAM-SHA-256': { id: 1, hash: 'sha256', bytes: 32 }, 'SCRAM-SHA-512': { id: 2, hash: 'sha512', bytes: 64 } } as const;
export type ScramMechanism = keyof typeof SCRAM_MECHANISMS;
/** Kafka's bounds on SCRAM iterations (ScramMechanism.minIterations / maxIterations). */
export const SCRAM_MIN_ITERATIONS = 4096;
export const SCRAM_MAX_ITERATIONS = 16384;

export function scramMechanismById(id: number): ScramMechanism | undefined {
  return (Object.keys(SCRAM_MECHANISMS) as ScramMechanism[]).find((m) => SCRAM_MECHANISMS[m].id === id);
}

export interface ScramCredential {
  readonly salt: Buffer;
  readonly iterations: number;
  readonly storedKey: Buffer;
  readonly serverKey: Buffer;
}

function hmac(m: ScramMechanism, key: Buffer, data: string | Buffer): Buffer {
  return createHmac(SCRAM_MECHANISMS[m].hash, key).update(data).digest();
}

function h(m: ScramMechanism, data: Buffer): Buffer {
  return createHash(SCRAM_MECHANISMS[m].hash).update(data).digest();
}

/** Hi(password, salt, i) of RFC 5802: PBKDF2 with the mechanism's HMAC. */
export function saltedPassword(m: ScramMechanism, password: string, salt: Buffer, iterations: number): Buffer {
  return pbkdf2Sync(Buffer.from(password.normalize('NFKC'), 'utf8'), salt, iterations, SCRAM_MECHANISMS[m].bytes, SCRAM_MECHANISMS[m].hash);
}

/** The stored credential from a salted password (what AlterUserScramCredentials carries). */
export function credentialFromSalted(m: ScramMechanism, salted: Buffer, salt: Buffer, iterations: number): ScramCredential {
  const clientKey = hmac(m, salted, 'Client Key');
  return { salt, iterations, storedKey: h(m, clientKey), serverKey: hmac(m, salted, 'Server Key') };
}

export function credentialFromPassword(m: ScramMechanism, password: string, iterations = SCRAM_MIN_ITERATIONS): ScramCredential {
  const salt = randomBytes(24);
  return credentialFromSalted(m, saltedPassword(m, password, salt, iterations), salt, iterations);
}

/** Decodes a saslname (RFC 5802 5.1: '=2C' is ',' and '=3D' is '='); undefined when malformed. */
function decodeSaslName(v: string): string | undefined {
  if (/=(?!2C|3D)/.test(v)) return undefined;
  return v.replace(/=2C/g, ',').replace(/=3D/g, '=');
}

function attributes(msg: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of msg.split(',')) {
    if (part.length < 2 || part[1] !== '=') throw new SaslAuthenticationError('malformed SCRAM message');
    out.set(part[0] ?? '', part.slice(2));
  }
  return out;
}

/**
 * The server side of one SCRAM exchange: client-first → server-first, client-final → server-final.
 * An unknown user fails at the first message with the same error as a wrong password, so that the answer
 * does not tell which users exist.
 */
export class ScramServer implements SaslServer {
  private state: 'first' | 'final' | 'done' = 'first';
  private user = '';
  private credential: ScramCredential | undefined;
  private clientFirstBare = '';
  private serverFirst = '';
  private nonce = '';
  private clientNonce = '';
  private gs2Header = '';

  constructor(
    readonly mechanism: ScramMechanism,
    private readonly lookup: (user: string) => ScramCredential | undefined,
    private readonly serverNonce: () => string = () => randomBytes(18).toString('base64url'),
  ) {}

  get principal(): string | undefined {
    return this.state === 'done' ? this.user : undefined;
  }

  step(token: Buffer): { response: Buffer; done: boolean } {
    const msg = token.toString('utf8');
    if (this.state === 'first') return this.first(msg);
    if (this.state === 'final') return this.final(msg);
    throw new SaslAuthenticationError('SCRAM exchange already complete');
  }

  private first(msg: string): { response: Buffer; done: boolean } {
    // gs2-header: flag ',' [a=authzid] ','
    const m = /^([nyp])(=[^,]*)?,(a=[^,]*)?,(.*)$/s.exec(msg);
    if (!m) throw new SaslAuthenticationError('malformed SCRAM client-first message');
    if (m[1] === 'p') throw new SaslAuthenticationError('SCRAM channel binding is not supported');
    this.gs2Header = msg.slice(0, msg.length - (m[4] ?? '').length);
    this.clientFirstBare = m[4] ?? '';
    const attrs = attributes(this.clientFirstBare);
    const user = decodeSaslName(attrs.get('n') ?? '');
    const clientNonce = attrs.get('r') ?? '';
    if (!user || clientNonce === '') throw new SaslAuthenticationError('SCRAM client-first message lacks a user or a nonce');
    const authzid = m[3] ? decodeSaslName(m[3].slice(2)) : undefined;
    if (authzid !== undefined && authzid !== '' && authzid !== user) throw new SaslAuthenticationError('authorization id differs from the user');
    this.user = user;
    this.credential = this.lookup(user);
    if (!this.credential) throw new SaslAuthenticationError('invalid credentials');
    this.clientNonce = clientNonce;
    this.nonce = clientNonce + this.serverNonce();
    this.serverFirst = `r=${this.nonce},s=${this.credential.salt.toString('base64')},i=${this.credential.iterations}`;
    this.state = 'final';
    return { response: Buffer.from(this.serverFirst, 'utf8'), done: false };
  }

  private final(msg: string): { response: Buffer; done: boolean } {
    const credential = this.credential;
    if (!credential) throw new SaslAuthenticationError('invalid credentials');
    const proofAt = msg.lastIndexOf(',p=');
    if (proofAt < 0) throw new SaslAuthenticationError('SCRAM client-final message lacks a proof');
    const withoutProof = msg.slice(0, proofAt);
    const attrs = attributes(withoutProof);
    if (attrs.get('c') !== Buffer.from(this.gs2Header, 'utf8').toString('base64')) throw new SaslAuthenticationError('SCRAM channel binding does not match');
    // librdkafka before 2.6.1 (Debian's 2.0, confluentinc/librdkafka#4895) sends client nonce + full nonce;
    // Kafka 3.8.1+ accepts that form (it still carries the whole server nonce, so replays still fail).
    const r = attrs.get('r');
    if (r !== this.nonce && r !== this.clientNonce + this.nonce) throw new SaslAuthenticationError('SCRAM nonce does not match');
    const proof = Buffer.from(msg.slice(proofAt + 3), 'base64');
    const authMessage = `${this.clientFirstBare},${this.serverFirst},${withoutProof}`;
    const clientSignature = hmac(this.mechanism, credential.storedKey, authMessage);
    if (proof.length !== clientSignature.length) throw new SaslAuthenticationError('invalid credentials');
    const clientKey = Buffer.alloc(proof.length);
    for (let i = 0; i < proof.length; i++) clientKey[i] = (proof[i] ?? 0) ^ (clientSignature[i] ?? 0);
    if (!timingSafeEqual(h(this.mechanism, clientKey), credential.storedKey)) throw new SaslAuthenticationError('invalid credentials');
    const serverSignature = hmac(this.mechanism, credential.serverKey, authMessage);
    this.state = 'done';
    return { response: Buffer.from(`v=${serverSignature.toString('base64')}`, 'utf8'), done: true };
  }
}

/**
 * Whether `password` is the one a stored credential was made from: StoredKey = H(HMAC(Hi(password), "Client
 * Key")), compared in constant time. This is how HTTP Basic authenticates a SCRAM user, since an HTTP
 * request carries the password itself rather than a SCRAM proof.
 */
export function passwordMatches(m: ScramMechanism, credential: ScramCredential, password: string): boolean {
  const salted = saltedPassword(m, password, credential.salt, credential.iterations);
  const storedKey = h(m, hmac(m, salted, 'Client Key'));
  return storedKey.length === credential.storedKey.length && timingSafeEqual(storedKey, credential.storedKey);
}
