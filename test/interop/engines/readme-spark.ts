/**
 * The README's Spark section (README.md, "Query the tables from Trino and Spark" → Spark), read so that the
 * tests start Spark with exactly what it tells users: the `spark-sql` command's `--packages` and `--conf`
 * settings, and the example queries of its `sql` block. Placeholders (`http://floe-host:8181`, `<token>`,
 * `<key>`, `<secret>`) are the only things a test replaces; one it does not know is an error.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { peerPath } from '../../helpers/peers.js';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
export const README = `${ROOT}README.md`;
/** What scripts/peers/30-spark.sh fetches. */
export const SPARK_POM = `${ROOT}test/interop/engines/spark-jars.pom.xml`;

export interface MavenCoordinate {
  readonly groupId: string;
  readonly artifactId: string;
  readonly version: string;
}

export interface SparkReadme {
  /** `--packages`, in order. */
  readonly packages: readonly MavenCoordinate[];
  /** Every `--conf key=value`, in order. */
  readonly conf: readonly (readonly [string, string])[];
  /** The example statements, without their `;`. */
  readonly queries: readonly string[];
}

const CATALOG_PREFIX = 'spark.sql.catalog.floe';

/** The Spark subsection of the README: from `### Spark` to the next heading. */
function sparkSection(text: string): string {
  const start = text.indexOf('\n### Spark\n');
  if (start < 0) throw new Error(`${README} has no "### Spark" section`);
  const rest = text.slice(start + 1);
  const end = rest.slice(1).search(/\n#{2,3} /);
  return end < 0 ? rest : rest.slice(0, end + 1);
}

function codeBlocks(section: string, lang: string): string[] {
  const out: string[] = [];
  const re = new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g');
  for (let m = re.exec(section); m !== null; m = re.exec(section)) out.push(m[1] ?? '');
  return out;
}

export function readSparkReadme(text = readFileSync(README, 'utf8')): SparkReadme {
  const section = sparkSection(text);
  const [command, ...moreCommands] = codeBlocks(section, 'bash');
  if (command === undefined || moreCommands.length > 0) throw new Error('the README\'s Spark section must have exactly one bash block (the spark-sql command)');
  const words = command.replace(/\\\n/g, ' ').trim().split(/\s+/);
  if (words[0] !== 'spark-sql') throw new Error(`the README's Spark command starts with ${String(words[0])}, not spark-sql`);
  const packages: MavenCoordinate[] = [];
  const conf: [string, string][] = [];
  for (let i = 1; i < words.length; i += 2) {
    const flag = words[i];
    const arg = words[i + 1];
    if (arg === undefined) throw new Error(`the README's Spark command ends with ${String(flag)} and no value`);
    if (flag === '--packages') {
      for (const c of arg.split(',')) {
        const [groupId, artifactId, version, ...extra] = c.split(':');
        if (groupId === undefined || artifactId === undefined || version === undefined || extra.length > 0) throw new Error(`bad package coordinate ${c}`);
        packages.push({ groupId, artifactId, version });
      }
    } else if (flag === '--conf') {
      const eq = arg.indexOf('=');
      if (eq < 0) throw new Error(`--conf ${arg} has no =`);
      conf.push([arg.slice(0, eq), arg.slice(eq + 1)]);
    } else {
      throw new Error(`the README's Spark command has ${String(flag)}, which the tests do not know how to apply`);
    }
  }
  const queries = codeBlocks(section, 'sql')
    .join('\n')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('--'))
    .map((l) => {
      if (!l.endsWith(';')) throw new Error(`README Spark query is not one line ending in ';': ${l}`);
      return l.slice(0, -1);
    });
  return { packages, conf, queries };
}

/** The jar files of the README's packages, as scripts/peers/30-spark.sh installed them (throws if missing). */
export function packageJars(readme: SparkReadme): string[] {
  return readme.packages.map((p) => peerPath('spark-jars', `${p.artifactId}-${p.version}.jar`));
}

/** The (groupId, artifactId, version) the installer's pom asks Maven for. */
export function pomDependencies(pom = readFileSync(SPARK_POM, 'utf8')): MavenCoordinate[] {
  const props = new Map<string, string>();
  for (const m of (/<properties>([\s\S]*?)<\/properties>/.exec(pom)?.[1] ?? '').matchAll(/<([\w.-]+)>([^<]*)<\/\1>/g)) props.set(m[1] ?? '', m[2] ?? '');
  const resolve = (v: string): string => v.replace(/\$\{([^}]+)\}/g, (_, k: string) => props.get(k) ?? `\${${k}}`);
  return [...pom.matchAll(/<dependency>([\s\S]*?)<\/dependency>/g)].map(([, body]) => {
    const tag = (name: string): string => resolve(new RegExp(`<${name}>([^<]*)</${name}>`).exec(body ?? '')?.[1] ?? '');
    return { groupId: tag('groupId'), artifactId: tag('artifactId'), version: tag('version') };
  });
}

/** Session settings: every `--conf` that is not a catalog's. */
export function sessionConf(readme: SparkReadme): Record<string, string> {
  return Object.fromEntries(readme.conf.filter(([k]) => !k.startsWith('spark.sql.catalog.')));
}

export interface CatalogTarget {
  /** The catalog's name in Spark (the README's is `floe`). */
  readonly name: string;
  /** Floe's REST catalog URL, for `http://floe-host:8181`. */
  readonly uri: string;
  readonly token: string;
  /** S3 credentials for an S3 warehouse; without them the README's `s3.*` keys are left out, as it says. */
  readonly s3?: { readonly accessKeyId: string; readonly secretAccessKey: string };
}

/** The README's `spark.sql.catalog.floe*` settings for one catalog, placeholders filled in. */
export function catalogConf(readme: SparkReadme, target: CatalogTarget): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of readme.conf) {
    if (!k.startsWith('spark.sql.catalog.')) continue;
    if (k !== CATALOG_PREFIX && !k.startsWith(`${CATALOG_PREFIX}.`)) throw new Error(`README Spark setting ${k} is not for the catalog floe`);
    const prop = k.slice(CATALOG_PREFIX.length);
    if (prop.startsWith('.s3.') && target.s3 === undefined) continue;
    const value = v
      .replace('http://floe-host:8181', target.uri)
      .replace('<token>', target.token)
      .replace('<key>', target.s3?.accessKeyId ?? '<key>')
      .replace('<secret>', target.s3?.secretAccessKey ?? '<secret>');
    if (/<[^>]*>|floe-host/.test(value)) throw new Error(`README Spark setting ${k}=${v} has a placeholder the tests do not fill`);
    out[`spark.sql.catalog.${target.name}${prop}`] = value;
  }
  return out;
}

/** A README query for another catalog name (`floe.` → `<name>.`). */
export function forCatalog(query: string, name: string): string {
  return query.replace(/\bfloe\./g, `${name}.`);
}
