/**
 * FileIO over S3 or any S3-compatible store, with `@aws-sdk/client-s3`. Locations are `s3://bucket/key`
 * (`s3a://` and `s3n://`, which Hadoop-based engines write, are accepted too; list answers in the prefix's scheme).
 *
 * - Writes at or above `multipartThreshold` go up as a multipart upload (`partSize` parts, a few in parallel);
 *   a failed upload is aborted so no parts linger and are billed.
 * - putIfAbsent sends `If-None-Match: *` and putIfMatch `If-Match: <etag>` (on CompleteMultipartUpload for large
 *   objects). 412 maps to ALREADY_EXISTS / PRECONDITION_FAILED; `409 ConditionalRequestConflict` (a concurrent
 *   conditional write in flight) is retried with backoff, as AWS advises.
 * - Not every S3-compatible store honours those headers (s3rver ignores them and overwrites). Unless told with
 *   `conditionalWrites: true | false`, the backend probes each bucket once, next to the first location it is
 *   asked about, and when the store ignores the headers putIfAbsent/putIfMatch throw UNSUPPORTED instead of
 *   silently overwriting. `capabilities(location)` reports the outcome so a commit layer can fall back to a
 *   catalog-held pointer.
 * - Retries: throttling (503 SlowDown, 429), 5xx and network errors are retried by the SDK's own "standard"
 *   strategy (exponential backoff with full jitter, plus a client-wide retry quota that stops retry storms when
 *   the store is down). We only set how many attempts it makes; stacking a second loop on top would multiply
 *   attempts and defeat the quota. Our own loop (retry.ts) handles only 409, which the SDK does not retry.
 * - A retried conditional write is ambiguous: the first attempt may have landed and the retry then sees its own
 *   object and gets 412. Each conditional write therefore carries a random `x-amz-meta-floe-write-id`; on 412
 *   after more than one attempt the object is read back, and if it carries our id the write is reported as ours.
 */
import { randomUUID } from 'node:crypto';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
  type CompletedPart,
} from '@aws-sdk/client-s3';
import { FileIOError, type FileIO, type FileIOCapabilities, type ObjectInfo } from './file-io.js';
import { retry } from './retry.js';

export interface S3FileIOOptions {
  /** Custom endpoint for S3-compatible stores (MinIO, Ceph, R2, a test server); omitted for AWS. */
  readonly endpoint?: string;
  /** Default: AWS_REGION, then AWS_DEFAULT_REGION, then us-east-1. */
  readonly region?: string;
  /** Path-style URLs (`endpoint/bucket/key`), which most non-AWS stores need. Default: true if endpoint is set. */
  readonly forcePathStyle?: boolean;
  /** Explicit credentials; omitted means the SDK's default chain (env, shared config/SSO, web identity, IMDS). */
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string; readonly sessionToken?: string };
  /** Objects this size or larger are uploaded in parts. Default 16 MiB. */
  readonly multipartThreshold?: number;
  /** Part size for multipart uploads; S3 needs >= 5 MiB for all parts but the last. Default 8 MiB. */
  readonly partSize?: number;
  /** Parts uploaded at once. Default 4. */
  readonly uploadConcurrency?: number;
  /** Keys per ListObjectsV2 page (max 1000). Default 1000. */
  readonly listPageSize?: number;
  /** Attempts per request made by the SDK's retry strategy, the first included. Default 5. */
  readonly maxAttempts?: number;
  /** 'standard' (default) or 'adaptive' (adds client-side rate limiting when throttled). */
  readonly retryMode?: 'standard' | 'adaptive';
  /** Whether the store honours If-None-Match/If-Match on writes: 'auto' (default) probes each bucket once. */
  readonly conditionalWrites?: 'auto' | boolean;
  /** Attempts for a conditional write that meets 409 ConditionalRequestConflict. Default 6. */
  readonly conflictAttempts?: number;
  /** Milliseconds to establish a connection / a socket may stay idle before the attempt fails (and is retried). */
  readonly connectionTimeoutMs?: number;
  readonly socketTimeoutMs?: number;
  /** Use this client instead of building one (it is not destroyed by close()). */
  readonly client?: S3Client;
}

const SCHEMES = ['s3://', 's3a://', 's3n://'] as const;
const WRITE_ID = 'floe-write-id';
const MiB = 1024 * 1024;

type Condition = { readonly ifNoneMatch: '*' } | { readonly ifMatch: string };

interface Located {
  readonly bucket: string;
  readonly key: string;
}

export class S3FileIO implements FileIO {
  readonly client: S3Client;
  private readonly ownsClient: boolean;
  private readonly multipartThreshold: number;
  private readonly partSize: number;
  private readonly uploadConcurrency: number;
  private readonly listPageSize: number;
  private readonly conditionalWrites: 'auto' | boolean;
  private readonly conflictAttempts: number;
  private readonly probes = new Map<string, Promise<boolean>>();

  constructor(options: S3FileIOOptions = {}) {
    this.multipartThreshold = options.multipartThreshold ?? 16 * MiB;
    this.partSize = options.partSize ?? 8 * MiB;
    this.uploadConcurrency = options.uploadConcurrency ?? 4;
    this.listPageSize = options.listPageSize ?? 1000;
    this.conditionalWrites = options.conditionalWrites ?? 'auto';
    this.conflictAttempts = options.conflictAttempts ?? 6;
    if (!(this.partSize >= 1) || this.multipartThreshold < this.partSize) {
      throw new FileIOError('INVALID_LOCATION', 'S3 FileIO: partSize must be >= 1 and multipartThreshold >= partSize');
    }
    if (!(this.listPageSize >= 1 && this.listPageSize <= 1000)) {
      throw new FileIOError('INVALID_LOCATION', 'S3 FileIO: listPageSize must be between 1 and 1000');
    }
    if (options.client) {
      this.client = options.client;
      this.ownsClient = false;
    } else {
      this.client = new S3Client({
        endpoint: options.endpoint,
        region: options.region ?? process.env['AWS_REGION'] ?? process.env['AWS_DEFAULT_REGION'] ?? 'us-east-1',
        forcePathStyle: options.forcePathStyle ?? options.endpoint !== undefined,
        credentials: options.credentials,
        maxAttempts: options.maxAttempts ?? 5,
        retryMode: options.retryMode ?? 'standard',
        requestHandler: {
          connectionTimeout: options.connectionTimeoutMs ?? 5_000,
          socketTimeout: options.socketTimeoutMs ?? 60_000,
        },
      });
      this.ownsClient = true;
    }
  }

  async capabilities(location: string): Promise<FileIOCapabilities> {
    return { conditionalWrites: await this.conditionalSupported(parse(location, true)) };
  }

  async get(location: string): Promise<Buffer> {
    const { bucket, key } = parse(location);
    try {
      const res = await this.client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      return await bodyToBuffer(res.Body);
    } catch (err) {
      throw mapError(err, `get "${location}"`);
    }
  }

  async getRange(location: string, offset: number, length: number): Promise<Buffer> {
    if (!Number.isSafeInteger(offset) || offset < 0 || !Number.isSafeInteger(length) || length < 0) {
      throw new RangeError(`getRange needs a non-negative integer offset and length, got offset=${offset} length=${length}`);
    }
    const { bucket, key } = parse(location);
    if (length === 0) {
      if ((await this.head(location)) === undefined) throw notFound(location);
      return Buffer.alloc(0);
    }
    try {
      const res = await this.client.send(
        new GetObjectCommand({ Bucket: bucket, Key: key, Range: `bytes=${offset}-${offset + length - 1}` }),
      );
      const buf = await bodyToBuffer(res.Body);
      // A store that ignores Range sends the whole object (200, not 206): cut it here.
      return res.ContentRange === undefined && buf.length > length ? buf.subarray(offset, offset + length) : buf;
    } catch (err) {
      if (status(err) === 416) return Buffer.alloc(0); // the object exists but starts before `offset`
      throw mapError(err, `read a range of "${location}"`);
    }
  }

  async head(location: string): Promise<ObjectInfo | undefined> {
    return (await this.headWithMetadata(location))?.info;
  }

  async put(location: string, data: Buffer): Promise<ObjectInfo> {
    const target = parse(location);
    try {
      return await this.upload(location, target, data, undefined, undefined);
    } catch (err) {
      throw mapError(err, `put "${location}"`);
    }
  }

  putIfAbsent(location: string, data: Buffer): Promise<ObjectInfo> {
    return this.conditionalPut(location, data, { ifNoneMatch: '*' });
  }

  putIfMatch(location: string, data: Buffer, etag: string): Promise<ObjectInfo> {
    return this.conditionalPut(location, data, { ifMatch: etag });
  }

  async *list(prefix: string): AsyncIterable<ObjectInfo> {
    const scheme = SCHEMES.find((s) => prefix.startsWith(s));
    const { bucket, key } = parse(prefix, true);
    if (scheme === undefined) throw invalid(prefix);
    let token: string | undefined;
    do {
      let page;
      try {
        page = await this.client.send(
          new ListObjectsV2Command({ Bucket: bucket, Prefix: key, ContinuationToken: token, MaxKeys: this.listPageSize }),
        );
      } catch (err) {
        throw mapError(err, `list "${prefix}"`);
      }
      for (const obj of page.Contents ?? []) {
        if (obj.Key === undefined) continue;
        yield {
          location: `${scheme}${bucket}/${obj.Key}`,
          size: obj.Size ?? 0,
          etag: obj.ETag ?? '',
          lastModified: obj.LastModified ?? new Date(0),
        };
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
  }

  async delete(location: string): Promise<void> {
    const { bucket, key } = parse(location);
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
    } catch (err) {
      if (status(err) === 404 && errorName(err) !== 'NoSuchBucket') return;
      throw mapError(err, `delete "${location}"`);
    }
  }

  async close(): Promise<void> {
    if (this.ownsClient) this.client.destroy();
  }

  private async headWithMetadata(
    location: string,
  ): Promise<{ info: ObjectInfo; metadata: Record<string, string> } | undefined> {
    const { bucket, key } = parse(location);
    try {
      const res = await this.client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
      return {
        info: {
          location,
          size: res.ContentLength ?? 0,
          etag: res.ETag ?? '',
          lastModified: res.LastModified ?? new Date(0),
        },
        metadata: res.Metadata ?? {},
      };
    } catch (err) {
      if (status(err) === 404 && errorName(err) !== 'NoSuchBucket') return undefined;
      throw mapError(err, `head "${location}"`);
    }
  }

  private async conditionalPut(location: string, data: Buffer, cond: Condition): Promise<ObjectInfo> {
    const target = parse(location);
    if (!(await this.conditionalSupported(target))) {
      throw new FileIOError(
        'UNSUPPORTED',
        `the store behind "${location}" ignores If-None-Match/If-Match, so ${'ifMatch' in cond ? 'putIfMatch' : 'putIfAbsent'} ` +
          'cannot be atomic there; keep the commit pointer in a catalog, or set conditionalWrites: true if the store does honour them',
      );
    }
    const writeId = randomUUID();
    let attempts = 0;
    const conflict = Symbol('conflict');
    try {
      return await retry(
        async () => {
          try {
            return await this.upload(location, target, data, cond, writeId);
          } catch (err) {
            attempts += attemptsOf(err);
            if (status(err) === 409 && errorName(err) !== 'BucketAlreadyExists') throw Object.assign(err as object, { [conflict]: true });
            throw err;
          }
        },
        {
          maxAttempts: this.conflictAttempts,
          baseDelayMs: 50,
          maxDelayMs: 2_000,
          retryable: (err) => typeof err === 'object' && err !== null && conflict in err,
        },
      );
    } catch (err) {
      const lost = status(err) === 412 || (status(err) === 404 && errorName(err) !== 'NoSuchBucket');
      if (!lost) throw mapError(err, `write "${location}"`);
      if (attempts > 1) {
        // An earlier attempt may have landed: if the object is ours, the write succeeded.
        const now = await this.headWithMetadata(location);
        if (now !== undefined && now.metadata[WRITE_ID] === writeId) return now.info;
      }
      if ('ifMatch' in cond) {
        throw new FileIOError(
          'PRECONDITION_FAILED',
          `"${location}" no longer has etag ${cond.ifMatch} (changed or deleted by another writer); reload and retry`,
          { cause: err },
        );
      }
      throw new FileIOError('ALREADY_EXISTS', `"${location}" already exists; putIfAbsent never replaces an object`, {
        cause: err,
      });
    }
  }

  /** One PutObject, or a multipart upload for large data. Errors are raw SDK errors. */
  private async upload(
    location: string,
    { bucket, key }: Located,
    data: Buffer,
    cond: Condition | undefined,
    writeId: string | undefined,
  ): Promise<ObjectInfo> {
    const condition = cond === undefined ? {} : 'ifMatch' in cond ? { IfMatch: cond.ifMatch } : { IfNoneMatch: cond.ifNoneMatch };
    const metadata = writeId === undefined ? undefined : { [WRITE_ID]: writeId };
    let etag: string | undefined;
    if (data.length < this.multipartThreshold) {
      const res = await this.client.send(
        new PutObjectCommand({ Bucket: bucket, Key: key, Body: data, ContentLength: data.length, Metadata: metadata, ...condition }),
      );
      etag = res.ETag;
    } else {
      etag = await this.multipart(bucket, key, data, condition, metadata);
    }
    if (etag === undefined) {
      const head = await this.head(location);
      if (head === undefined) throw new FileIOError('IO_ERROR', `"${location}" vanished right after it was written`);
      return head;
    }
    return { location, size: data.length, etag, lastModified: new Date() };
  }

  private async multipart(
    bucket: string,
    key: string,
    data: Buffer,
    condition: { IfMatch?: string; IfNoneMatch?: string },
    metadata: Record<string, string> | undefined,
  ): Promise<string | undefined> {
    const created = await this.client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key, Metadata: metadata }));
    const uploadId = created.UploadId;
    if (uploadId === undefined) throw new FileIOError('IO_ERROR', `the store returned no UploadId for s3://${bucket}/${key}`);
    try {
      const count = Math.ceil(data.length / this.partSize);
      const parts: CompletedPart[] = new Array<CompletedPart>(count);
      let next = 0;
      const worker = async (): Promise<void> => {
        while (next < count) {
          const i = next++;
          const body = data.subarray(i * this.partSize, Math.min(data.length, (i + 1) * this.partSize));
          const res = await this.client.send(
            new UploadPartCommand({ Bucket: bucket, Key: key, UploadId: uploadId, PartNumber: i + 1, Body: body, ContentLength: body.length }),
          );
          parts[i] = { ETag: res.ETag, PartNumber: i + 1 };
        }
      };
      await Promise.all(Array.from({ length: Math.min(this.uploadConcurrency, count) }, worker));
      const done = await this.client.send(
        new CompleteMultipartUploadCommand({
          Bucket: bucket,
          Key: key,
          UploadId: uploadId,
          MultipartUpload: { Parts: parts },
          ...condition,
        }),
      );
      return done.ETag;
    } catch (err) {
      await this.client
        .send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId }))
        .catch(() => undefined); // already completed or gone: nothing to clean up
      throw err;
    }
  }

  private conditionalSupported(target: Located): Promise<boolean> {
    if (this.conditionalWrites !== 'auto') return Promise.resolve(this.conditionalWrites);
    let probe = this.probes.get(target.bucket);
    if (probe === undefined) {
      probe = this.probe(target);
      this.probes.set(target.bucket, probe);
      probe.catch(() => this.probes.delete(target.bucket)); // a failed probe (network) is tried again next time
    }
    return probe;
  }

  /**
   * Asks the store itself: create a probe object with If-None-Match: *, then write it again the same way and
   * with a wrong If-Match. A store that honours the headers refuses both with 412; one that ignores them (s3rver)
   * accepts both; one that rejects the headers outright (501/400) does not support them either.
   */
  private async probe({ bucket, key }: Located): Promise<boolean> {
    const dir = key.includes('/') ? key.slice(0, key.lastIndexOf('/') + 1) : '';
    const probeKey = `${dir}.floe-conditional-write-probe-${randomUUID()}`;
    const put = async (cond: { IfNoneMatch?: string; IfMatch?: string }): Promise<'ok' | 'refused' | 'rejected'> => {
      try {
        await this.client.send(new PutObjectCommand({ Bucket: bucket, Key: probeKey, Body: Buffer.from('probe'), ...cond }));
        return 'ok';
      } catch (err) {
        if (status(err) === 412) return 'refused';
        if (status(err) === 501 || status(err) === 400) return 'rejected';
        throw mapError(err, `probe conditional writes in bucket "${bucket}"`);
      }
    };
    try {
      if ((await put({ IfNoneMatch: '*' })) !== 'ok') return false;
      if ((await put({ IfNoneMatch: '*' })) !== 'refused') return false;
      return (await put({ IfMatch: '"00000000000000000000000000000000"' })) === 'refused';
    } finally {
      await this.client.send(new DeleteObjectCommand({ Bucket: bucket, Key: probeKey })).catch(() => undefined);
    }
  }
}

/** `s3://bucket/key` -> { bucket, key }. A prefix may have an empty key. */
export function parse(location: string, prefix = false): Located {
  const scheme = SCHEMES.find((s) => location.startsWith(s));
  if (scheme === undefined) throw invalid(location);
  const rest = location.slice(scheme.length);
  const slash = rest.indexOf('/');
  const bucket = slash === -1 ? rest : rest.slice(0, slash);
  const key = slash === -1 ? '' : rest.slice(slash + 1);
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
    throw new FileIOError('INVALID_LOCATION', `"${location}" has no valid bucket name (3-63 characters: a-z, 0-9, ".", "-")`);
  }
  if (!prefix && (key === '' || key.endsWith('/'))) {
    throw new FileIOError('INVALID_LOCATION', `"${location}" names no object; expected s3://bucket/key with a key not ending in "/"`);
  }
  if (Buffer.byteLength(key) > 1024) {
    throw new FileIOError('INVALID_LOCATION', `"${location}": S3 keys are at most 1024 bytes`);
  }
  return { bucket, key };
}

function invalid(location: string): FileIOError {
  return new FileIOError('INVALID_LOCATION', `"${location}" is not an S3 location; expected s3://bucket/key`);
}

function notFound(location: string, cause?: unknown): FileIOError {
  return new FileIOError('NOT_FOUND', `"${location}" does not exist`, { cause });
}

async function bodyToBuffer(body: { transformToByteArray(): Promise<Uint8Array> } | undefined): Promise<Buffer> {
  if (body === undefined) return Buffer.alloc(0);
  const bytes = await body.transformToByteArray();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function metadataOf(err: unknown): { httpStatusCode?: number; attempts?: number } | undefined {
  if (typeof err !== 'object' || err === null || !('$metadata' in err)) return undefined;
  const meta = err.$metadata;
  return typeof meta === 'object' && meta !== null ? (meta as { httpStatusCode?: number; attempts?: number }) : undefined;
}

function status(err: unknown): number | undefined {
  return metadataOf(err)?.httpStatusCode;
}

function attemptsOf(err: unknown): number {
  return metadataOf(err)?.attempts ?? 1;
}

function errorName(err: unknown): string | undefined {
  return err instanceof Error ? err.name : undefined;
}

function mapError(err: unknown, what: string): FileIOError {
  if (err instanceof FileIOError) return err;
  const code = status(err);
  const name = errorName(err);
  const detail = `${name ?? 'Error'}${code === undefined ? '' : ` ${code}`}: ${err instanceof Error ? err.message : String(err)}`;
  if (name === 'NoSuchBucket') {
    return new FileIOError('IO_ERROR', `could not ${what}: the bucket does not exist; create it or fix the warehouse location`, { cause: err });
  }
  if (code === 404 || name === 'NoSuchKey' || name === 'NotFound') {
    return new FileIOError('NOT_FOUND', `could not ${what}: no such object`, { cause: err });
  }
  const hint =
    code === 403
      ? '; check the credentials and the bucket policy'
      : code === 301 || name === 'PermanentRedirect'
        ? '; the bucket is in another region, set the region'
        : code === 501
          ? '; the store does not implement this operation'
          : code === undefined || code >= 500 || code === 429
            ? '; the store kept failing after retries, check its health and the network'
            : '';
  return new FileIOError(code === 501 ? 'UNSUPPORTED' : 'IO_ERROR', `could not ${what} (${detail})${hint}`, { cause: err });
}
