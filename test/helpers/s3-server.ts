/**
 * A real S3-compatible HTTP server for tests: s3rver (npm), on 127.0.0.1, port 0, storing into a fresh temp
 * folder, with one bucket created. Usage:
 *
 *   const s3 = await startS3Server();
 *   t.after(() => s3.stop());
 *   const io = new S3FileIO(s3.fileIOOptions());
 *
 * What s3rver 3.7.1 does (checked): path-style URLs, SigV4 signatures (credentials S3RVER/S3RVER), ranges,
 * ListObjectsV2 with continuation tokens (which need OpenSSL's legacy DES, see CHILD), multipart uploads,
 * user metadata. It IGNORES If-None-Match and If-Match on PUT and on CompleteMultipartUpload: it overwrites,
 * so S3FileIO's probe finds conditionalWrites=false there. A range read of an empty object breaks the
 * connection (it announces 1 byte and sends none) where S3 answers 416.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import type { S3FileIOOptions } from '../../iceberg/io/s3.js';

const require = createRequire(import.meta.url);

/**
 * Runs in the child. s3rver signs ListObjectsV2 continuation tokens with DES, which OpenSSL 3 only offers with
 * the legacy provider: hence a child process started with --openssl-legacy-provider, not an in-process server.
 * It exits when its stdin closes, so a crashed test run leaves no server behind.
 */
const CHILD = `
const S3rver = require(process.env.S3RVER_MODULE);
const server = new S3rver({
  address: '127.0.0.1', port: 0, silent: true, directory: process.env.S3RVER_DIR, vhostBuckets: false,
  configureBuckets: [{ name: process.env.S3RVER_BUCKET }],
});
server.run().then(
  (addr) => process.stdout.write(JSON.stringify({ port: addr.port }) + '\\n'),
  (err) => { console.error(err); process.exit(1); },
);
const stop = () => server.close().finally(() => process.exit(0));
process.on('SIGTERM', stop);
process.stdin.on('end', stop);
process.stdin.resume();
`;

export interface S3TestServer {
  /** `http://127.0.0.1:<port>` */
  readonly endpoint: string;
  /** The bucket created at start. */
  readonly bucket: string;
  readonly region: string;
  readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string };
  /** Where s3rver keeps its files. */
  readonly directory: string;
  /** Options for S3FileIO pointing at this server, merged with `extra`. */
  fileIOOptions(extra?: S3FileIOOptions): S3FileIOOptions;
  createBucket(name: string): Promise<void>;
  /** Stops the server and removes its folder. Safe to call twice. */
  stop(): Promise<void>;
}

export async function startS3Server(options: { bucket?: string } = {}): Promise<S3TestServer> {
  const directory = await mkdtemp(join(tmpdir(), 'floe-s3rver-'));
  const bucket = options.bucket ?? 'floe-test';
  const child = spawn(process.execPath, ['--openssl-legacy-provider', '-e', CHILD], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, S3RVER_MODULE: require.resolve('s3rver'), S3RVER_DIR: directory, S3RVER_BUCKET: bucket },
  });
  const exited = once(child, 'exit');
  let port: number;
  try {
    const lines = createInterface({ input: child.stdout });
    const first = await Promise.race([
      once(lines, 'line').then(([line]) => String(line)),
      exited.then(([code]) => {
        throw new Error(`s3rver exited with code ${String(code)} before listening`);
      }),
    ]);
    port = (JSON.parse(first) as { port: number }).port;
    lines.close();
  } catch (err) {
    child.kill();
    await rm(directory, { recursive: true, force: true });
    throw err;
  }
  const endpoint = `http://127.0.0.1:${port}`;
  const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
  const region = 'us-east-1';
  let stopped: Promise<void> | undefined;
  return {
    endpoint,
    bucket,
    region,
    credentials,
    directory,
    fileIOOptions: (extra = {}) => ({ endpoint, region, credentials, forcePathStyle: true, ...extra }),
    createBucket: async (name) => {
      const client = new S3Client({ endpoint, region, credentials, forcePathStyle: true });
      try {
        await client.send(new CreateBucketCommand({ Bucket: name }));
      } finally {
        client.destroy();
      }
    },
    stop: () =>
      (stopped ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) {
          child.stdin.end();
          await exited;
        }
        await rm(directory, { recursive: true, force: true });
      })()),
  };
}

/**
 * moto's S3 server (Python package `moto`, present on this project's machines), for what s3rver cannot show:
 * moto honours If-None-Match: * and If-Match on PutObject and If-None-Match on CompleteMultipartUpload, so the
 * conditional-write path of S3FileIO runs against a real HTTP server there. Resolves to a reason string instead
 * of a server when moto is not installed, so the caller can say why it did not run. `python`: the Python
 * that has moto (default FLOE_TEST_PYTHON, then python3; the external catalog tests pass motoPython()).
 */
export async function startMotoS3Server(options: { bucket?: string; python?: string } = {}): Promise<S3TestServer | string> {
  const python = options.python ?? process.env['FLOE_TEST_PYTHON'] ?? 'python3';
  const bucket = options.bucket ?? 'floe-test';
  // moto's own `python -m moto.server` always serves requests on threads, and then checks an If-Match and
  // writes the object without a lock between them: two concurrent conditional PUTs on one etag can both
  // succeed (seen in CI), which S3 never allows. One request at a time (HTTP/1.0, so no connection is held
  // open between requests) makes each conditional write atomic, as on S3.
  const launcher = [
    'from moto.server import DomainDispatcherApplication, create_backend_app',
    'from werkzeug.serving import run_simple',
    "run_simple('127.0.0.1', 0, DomainDispatcherApplication(create_backend_app), threaded=False)",
  ].join('\n');
  const child = spawn(python, ['-c', launcher], { stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = once(child, 'exit').then(() => undefined);
  const spawnError = once(child, 'error').then(([err]) => String(err));
  let stderr = '';
  const port = await new Promise<number | string>((resolve) => {
    const lines = createInterface({ input: child.stderr });
    lines.on('line', (line) => {
      stderr += `${line}\n`;
      const m = /Running on http:\/\/127\.0\.0\.1:(\d+)/.exec(line);
      if (m?.[1] !== undefined) resolve(Number(m[1]));
    });
    void exited.then(() => resolve(`moto server did not start with ${python} (moto.server's app under werkzeug): ${stderr.trim().split('\n').pop() ?? ''}`));
    void spawnError.then((msg) => resolve(`moto server could not be spawned (${python}): ${msg}`));
  });
  if (typeof port === 'string') {
    child.kill();
    return port;
  }
  const endpoint = `http://127.0.0.1:${port}`;
  const credentials = { accessKeyId: 'testing', secretAccessKey: 'testing' };
  const region = 'us-east-1';
  const createBucket = async (name: string): Promise<void> => {
    const client = new S3Client({ endpoint, region, credentials, forcePathStyle: true });
    try {
      await client.send(new CreateBucketCommand({ Bucket: name }));
    } finally {
      client.destroy();
    }
  };
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
    })());
  try {
    await createBucket(bucket);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    endpoint,
    bucket,
    region,
    credentials,
    directory: '',
    fileIOOptions: (extra = {}) => ({ endpoint, region, credentials, forcePathStyle: true, ...extra }),
    createBucket,
    stop,
  };
}

/**
 * The broker flags for a warehouse at s3://<bucket>/wh on `s3` (its first bucket unless `bucket` names
 * another): endpoint (or `endpoint`, e.g. a fault proxy in front of it), region, path-style access, keys.
 */
export function s3WarehouseFlags(s3: S3TestServer, options: { bucket?: string; endpoint?: string } = {}): string[] {
  return [
    `--iceberg.warehouse=s3://${options.bucket ?? s3.bucket}/wh`,
    `--iceberg.s3.endpoint=${options.endpoint ?? s3.endpoint}`,
    `--iceberg.s3.region=${s3.region}`,
    '--iceberg.s3.path.style.access=true',
    `--iceberg.s3.access.key.id=${s3.credentials.accessKeyId}`,
    `--iceberg.s3.secret.access.key=${s3.credentials.secretAccessKey}`,
  ];
}
