/**
 * AWS Signature Version 4 for the requests of an external REST catalog (AWS Glue's Iceberg REST endpoint,
 * S3 Tables', or any catalog behind API Gateway), as Apache Iceberg's RESTSigV4Signer / RESTSigV4AuthSession
 * and pyiceberg's SigV4Adapter sign them:
 *   - every request is signed with the signing name (`glue`, `s3tables`, `execute-api`, ...) and region;
 *   - the body's SHA-256 goes in `x-amz-content-sha256` and is signed (the empty string's hash without a body);
 *   - a bearer token the client also sends (iceberg.catalog.token, OAuth2) moves to `Original-Authorization`,
 *     which is signed too, since SigV4 takes over `Authorization`;
 *   - a session token goes in `x-amz-security-token`.
 * The canonical request and the signature come from @smithy/signature-v4, the AWS SDK's own signer; the
 * credentials are the ones configured, else the AWS SDK's default chain (environment, shared config and
 * credential files, SSO, web identity, ECS and EC2 instance roles), refreshed before they expire.
 */
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import { CatalogError } from './catalog.js';

export interface AwsCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
  /** When temporary credentials run out (the default chain renews them before). */
  readonly expiration?: Date;
}

export interface SigV4Options {
  /** Region of the endpoint, e.g. `us-east-1`. */
  readonly region: string;
  /** Signing name of the service: `glue` for Glue's Iceberg REST endpoint, `s3tables` for S3 Tables'. */
  readonly service: string;
  /** Static credentials; absent: the AWS default credential chain. */
  readonly credentials?: AwsCredentials;
  /** The signing time (tests); default now. */
  readonly now?: () => Date;
}

/** The header a caller's own `Authorization` (a bearer token) is moved to, as Iceberg does. */
export const RELOCATED_PREFIX = 'original-';

/** Headers the signer sets: a caller's own value of one of them is kept under `original-<name>`. */
const SIGNER_HEADERS = ['authorization', 'x-amz-date', 'x-amz-content-sha256', 'x-amz-security-token'];

/** SHA-256 and HMAC-SHA-256 from node:crypto, in the shape the signer asks for. */
class NodeSha256 {
  private hash: Hash | Hmac;
  constructor(private readonly secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hash = this.create();
  }

  private create(): Hash | Hmac {
    if (this.secret === undefined) return createHash('sha256');
    const key = typeof this.secret === 'string' ? this.secret : ArrayBuffer.isView(this.secret) ? Buffer.from(this.secret.buffer, this.secret.byteOffset, this.secret.byteLength) : Buffer.from(this.secret);
    return createHmac('sha256', key);
  }

  update(chunk: string | Uint8Array): void {
    this.hash.update(chunk);
  }

  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.hash.digest()));
  }

  reset(): void {
    this.hash = this.create();
  }
}

type CredentialProvider = () => Promise<AwsCredentials>;

/** The AWS SDK's default credential chain, loaded when first needed (most brokers never sign). */
async function defaultChain(): Promise<CredentialProvider> {
  const { defaultProvider } = await import('@aws-sdk/credential-provider-node');
  const provider = defaultProvider();
  return async () => {
    try {
      return await provider();
    } catch (err) {
      throw new CatalogError('NOT_AUTHORIZED', `no AWS credentials to sign the REST catalog's requests with (SigV4): ${err instanceof Error ? err.message : String(err)}; set iceberg.catalog.access.key.id and iceberg.catalog.secret.access.key, or give the broker credentials through the AWS default chain (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, an instance role)`, { cause: err });
    }
  };
}

export class SigV4Signer {
  private readonly signer: SignatureV4;
  private readonly now: () => Date;
  private chain: Promise<CredentialProvider> | undefined;

  constructor(private readonly options: SigV4Options) {
    if (options.region === '') throw new Error('SigV4 signing needs a region');
    if (options.service === '') throw new Error('SigV4 signing needs a signing name');
    const c = options.credentials;
    this.signer = new SignatureV4({
      service: options.service,
      region: options.region,
      credentials: c !== undefined ? { ...c } : () => this.fromChain(),
      sha256: NodeSha256,
      uriEscapePath: true,
      applyChecksum: true,
    });
    this.now = options.now ?? (() => new Date());
  }

  private async fromChain(): Promise<AwsCredentials> {
    this.chain ??= defaultChain().catch((err: unknown) => {
      this.chain = undefined;
      throw err;
    });
    return (await this.chain)();
  }

  /**
   * The headers to send `method url` with: `headers` (lower-case names) plus the signature's, the caller's
   * own `authorization` (and any other header the signer sets) kept as `original-<name>`. `host` is signed
   * but not returned: fetch sends the URL's host itself.
   */
  async sign(method: string, url: string, headers: Readonly<Record<string, string>>, body: string | undefined): Promise<Record<string, string>> {
    const u = new URL(url);
    const out: Record<string, string> = {};
    for (const [name, value] of Object.entries(headers)) {
      const lower = name.toLowerCase();
      out[SIGNER_HEADERS.includes(lower) ? `${RELOCATED_PREFIX}${lower}` : lower] = value;
    }
    out['host'] = u.host;
    const query: Record<string, string | string[]> = {};
    for (const [k, v] of u.searchParams) {
      const prior = query[k];
      query[k] = prior === undefined ? v : Array.isArray(prior) ? [...prior, v] : [prior, v];
    }
    const signed = await this.signer.sign({
      method,
      protocol: u.protocol,
      hostname: u.hostname,
      ...(u.port !== '' ? { port: Number(u.port) } : {}),
      path: u.pathname,
      query,
      headers: out,
      ...(body !== undefined ? { body } : {}),
    }, { signingDate: this.now() });
    const result: Record<string, string> = {};
    for (const [name, value] of Object.entries(signed.headers)) if (name !== 'host') result[name] = value;
    return result;
  }
}
