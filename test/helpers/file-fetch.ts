/**
 * Serves warehouse objects through `globalThis.fetch`, so readers that only speak fetch (icebird, hyparquet)
 * can read a table from any FileIO: `file://` URLs, and the `https://<bucket>.s3.amazonaws.com/<key>` URLs
 * that icebird makes of `s3://` locations. `Range: bytes=a-b` is answered with 206. Returns the undo.
 */
import type { FileIO } from '../../iceberg/io/file-io.js';

const S3_HTTPS = /^https:\/\/([^./]+)\.s3\.amazonaws\.com\/(.*)$/;

/** The FileIO location behind a URL that readers fetch, or undefined for URLs left to the real fetch. */
function locationOf(url: string): string | undefined {
  if (url.startsWith('file://')) return decodeURI(url);
  const m = S3_HTTPS.exec(url);
  return m ? `s3://${m[1]}/${m[2]}` : undefined;
}

async function objectResponse(ios: readonly FileIO[], location: string, init?: RequestInit): Promise<Response> {
  // The first FileIO that holds the object: readers of two warehouses (a folder and a bucket, say) may run at once.
  let io: FileIO | undefined;
  let info: Awaited<ReturnType<FileIO['head']>>;
  for (const candidate of ios) {
    try {
      info = await candidate.head(location);
    } catch (err) {
      if ((err as { code?: unknown }).code === 'INVALID_LOCATION') continue; // not this FileIO's scheme
      throw err;
    }
    if (info) {
      io = candidate;
      break;
    }
  }
  if (!io || !info) return new Response(null, { status: 404, statusText: 'Not Found' });
  const range = new Headers(init?.headers).get('range');
  if (range) {
    const m = /^bytes=(\d+)-(\d*)$/.exec(range);
    if (!m) return new Response(null, { status: 416 });
    const start = Number(m[1]);
    const end = Math.min(m[2] ? Number(m[2]) : info.size - 1, info.size - 1);
    const buf = end >= start ? await io.getRange(location, start, end - start + 1) : Buffer.alloc(0);
    return new Response(buf, { status: 206, headers: { 'content-range': `bytes ${start}-${end}/${info.size}`, 'content-length': String(buf.length) } });
  }
  if (init?.method === 'HEAD') return new Response(null, { status: 200, headers: { 'content-length': String(info.size) } });
  const body = await io.get(location);
  return new Response(body, { status: 200, headers: { 'content-length': String(body.length) } });
}

const installed: FileIO[] = [];
let original: typeof fetch | undefined;

/**
 * Makes globalThis.fetch serve warehouse URLs from `io` (beside any other FileIO installed at the same time);
 * returns a function that takes `io` out again, and restores the real fetch once none is left.
 */
export function installWarehouseFetch(io: FileIO): () => void {
  if (installed.length === 0) {
    const real = globalThis.fetch;
    original = real;
    globalThis.fetch = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
      const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
      const location = locationOf(url);
      return location === undefined ? real(input, init) : objectResponse([...installed].reverse(), location, init);
    };
  }
  installed.push(io);
  let done = false;
  return () => {
    if (done) return;
    done = true;
    installed.splice(installed.indexOf(io), 1);
    if (installed.length === 0 && original !== undefined) {
      globalThis.fetch = original;
      original = undefined;
    }
  };
}
