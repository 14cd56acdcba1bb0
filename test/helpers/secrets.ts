/**
 * The secret scan the security tests share: whatever a test captured from the broker (log lines, /metrics,
 * the status page, HTTP responses, a tool's output) must not hold any password, token or key it used.
 *
 * It cannot pass vacuously: an empty capture or an empty list of secrets fails, as does a secret too short to
 * be told apart from ordinary text. Each secret is looked for as written and URL-encoded (how it would appear
 * in a logged URL or form body); a hit names where it was found and shows only the secret's first characters.
 */
import assert from 'node:assert/strict';

/** Shorter secrets would match ordinary words and numbers by chance. */
const MIN_SECRET_LENGTH = 8;

/** `captured` is one text per line, response or page; `secrets` the values that must appear in none of them. */
export function assertNoSecrets(captured: readonly string[], secrets: readonly string[]): void {
  const texts = captured.filter((c) => c.length > 0);
  assert.ok(texts.length > 0, 'nothing was captured: a scan of nothing proves nothing');
  assert.ok(secrets.length > 0, 'no secrets to look for');
  for (const s of secrets) assert.ok(s.length >= MIN_SECRET_LENGTH, `secret ${JSON.stringify(s.slice(0, 3))}... is shorter than ${MIN_SECRET_LENGTH} characters`);
  for (const text of texts) {
    for (const s of secrets) {
      for (const form of new Set([s, encodeURIComponent(s)])) {
        assert.ok(!text.includes(form), `a secret (${s.slice(0, 4)}...) appears in: ${text.slice(0, 200).replaceAll(form, '<secret>')}`);
      }
    }
  }
}

/**
 * The admin port's operator-facing answers, each as "<path> <status> <headers> <body>": /metrics, the status
 * page and its JSON API, plus `extraPaths`. `headers` (an Authorization header, say) goes with each request;
 * every page must answer 200, so a scan never looks at an error page in place of the real one.
 */
export async function captureAdminPages(adminUrl: string, extraPaths: readonly string[] = [], headers: Record<string, string> = {}): Promise<string[]> {
  const out: string[] = [];
  for (const path of ['/metrics', '/', '/api/status', '/api/topics', ...extraPaths]) {
    const res = await fetch(`${adminUrl}${path}`, { headers });
    const body = await res.text();
    assert.equal(res.status, 200, `${path}: ${body.slice(0, 200)}`);
    out.push(`${path} ${res.status} ${JSON.stringify([...res.headers])} ${body}`);
  }
  return out;
}
