/** A tiny HTTP client for the registry tests: JSON in, status and parsed JSON out, Confluent's content type. */
export const SR_CONTENT_TYPE = 'application/vnd.schemaregistry.v1+json';

export interface Reply {
  readonly status: number;
  readonly body: unknown;
  readonly text: string;
  readonly contentType: string | null;
}

export function registryClient(base: string) {
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> => {
    const init: RequestInit = { method, headers: { ...(body !== undefined ? { 'Content-Type': SR_CONTENT_TYPE } : {}), ...headers } };
    if (body !== undefined) init.body = typeof body === 'string' ? body : JSON.stringify(body);
    const res = await fetch(base + path, init);
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // raw text (the /schema endpoints)
    }
    return { status: res.status, body: parsed, text, contentType: res.headers.get('content-type') };
  };
  return {
    call,
    get: (path: string) => call('GET', path),
    post: (path: string, body: unknown, headers?: Record<string, string>) => call('POST', path, body, headers),
    put: (path: string, body: unknown) => call('PUT', path, body),
    del: (path: string) => call('DELETE', path),
    /** Registers and returns the id; throws with the reply when refused. */
    async register(subject: string, schema: unknown, schemaType?: string, references?: unknown[]): Promise<number> {
      const r = await call('POST', `/subjects/${encodeURIComponent(subject)}/versions`, { schema: typeof schema === 'string' ? schema : JSON.stringify(schema), ...(schemaType ? { schemaType } : {}), ...(references ? { references } : {}) });
      if (r.status !== 200) throw new Error(`register ${subject}: ${r.status} ${r.text}`);
      return (r.body as { id: number }).id;
    },
  };
}
