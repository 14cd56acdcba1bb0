/**
 * The README's Trino section, as the Trino test uses it: the catalog properties block (`etc/catalog/
 * floe.properties`) and the example queries. The test builds its catalogs from this block, only putting its
 * own hosts, ports and keys in for the placeholders, so what the README says is what Trino is run with.
 *
 * The block is a list of property lines in commented groups: the lines before the first comment are always
 * used; a group whose comment mentions `iceberg.rest.token` only when the broker requires a token; the group
 * whose comment mentions S3 for an S3 warehouse, the one that mentions a local warehouse for `file://`.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

export interface ReadmeTrino {
  /** The catalog properties for a broker at `uri` with its warehouse on S3 or in a local folder. */
  catalog(warehouse: { kind: 's3'; endpoint: string; accessKey: string; secretKey: string } | { kind: 'local' }, uri: string, token?: string): Record<string, string>;
  /** The SQL blocks of the Trino section, in order. */
  readonly queries: readonly string[];
}

interface Group {
  readonly comment: string;
  readonly lines: readonly string[];
}

export function readmeTrino(readmePath = resolve('README.md')): ReadmeTrino {
  const text = readFileSync(readmePath, 'utf8');
  const start = text.indexOf('\n### Trino');
  assert.ok(start >= 0, 'README.md has a "### Trino" section');
  // The section ends at the next heading of level 2 or 3 (the `# ...` lines inside its code blocks are not headings).
  const ends = ['\n## ', '\n### '].map((h) => text.indexOf(h, start + 1)).filter((i) => i >= 0);
  const section = text.slice(start, ends.length > 0 ? Math.min(...ends) : undefined);
  const blocks = (lang: string): string[] => [...section.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1] ?? '');
  const [props] = blocks('properties');
  assert.ok(props !== undefined, 'the Trino section has a ```properties block');
  const groups: Group[] = [{ comment: '', lines: [] }];
  for (const raw of props.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    if (line.startsWith('#')) groups.push({ comment: line, lines: [] });
    else (groups[groups.length - 1]?.lines as string[]).push(line);
  }
  const group = (what: RegExp): Group => {
    const found = groups.filter((g) => what.test(g.comment));
    assert.equal(found.length, 1, `the Trino properties block has exactly one group whose comment matches ${what}`);
    return found[0] as Group;
  };
  const tokenGroup = group(/iceberg\.rest\.token/);
  const s3Group = group(/\bS3\b/);
  const localGroup = group(/local warehouse/);
  assert.equal(groups.length, 4, 'the Trino properties block has the common lines, a token group, an S3 group and a local group');
  const queries = blocks('sql').map((q) => q.trim().replace(/;$/, ''));
  assert.ok(queries.length > 0, 'the Trino section has a ```sql example');
  return {
    queries,
    catalog(warehouse, uri, token) {
      const lines = [...(groups[0]?.lines ?? []), ...(token === undefined ? [] : tokenGroup.lines), ...(warehouse.kind === 's3' ? s3Group : localGroup).lines];
      const subs: [string, string][] = [['http://floe-host:8181', uri]];
      if (token !== undefined) subs.push(['<token>', token]);
      if (warehouse.kind === 's3') subs.push(['http://minio:9000', warehouse.endpoint], ['<key>', warehouse.accessKey], ['<secret>', warehouse.secretKey]);
      const out: Record<string, string> = {};
      for (const line of lines) {
        const eq = line.indexOf('=');
        assert.ok(eq > 0, `README Trino property line "${line}" is key=value`);
        let value = line.slice(eq + 1);
        for (const [from, to] of subs) value = value.replaceAll(from, to);
        assert.ok(!/<[a-z-]+>|floe-host|minio/.test(value), `README Trino property ${line}: a placeholder the test does not fill in`);
        out[line.slice(0, eq)] = value;
      }
      return out;
    },
  };
}
