/**
 * Summarises a V8 `.cpuprofile` (from `node --cpu-prof`): self time per function, heaviest first, so a
 * benchmark can say where the broker spends its time.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { formatTable } from './table.js';

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
}
interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
}
interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

export interface ProfileFrame {
  /** `function (file:line)`, with the file shortened to the repo-relative path. */
  readonly frame: string;
  readonly selfMs: number;
  /** Share of the busy (non-idle) time. */
  readonly selfPct: number;
}

export interface ProfileSummary {
  /** Sampled time, idle included. */
  readonly totalMs: number;
  /** Sampled time the thread was not idle. */
  readonly busyMs: number;
  readonly frames: ProfileFrame[];
}

function describe(cf: CallFrame): string {
  const name = cf.functionName === '' ? '(anonymous)' : cf.functionName;
  if (cf.url === '') return name;
  const file = cf.url.replace(/^file:\/\//, '').replace(/^.*?\/(broker|protocol|tiering|iceberg|node_modules)\//, '$1/');
  return `${name} (${file}:${cf.lineNumber + 1})`;
}

/**
 * Self time per function of the profile at `path`, heaviest first, the first `top` of them, as shares of
 * the busy time (a benchmark's broker idles while the baselines run, so shares of the total say little).
 */
export async function topSelfTime(path: string, top = 15): Promise<ProfileSummary> {
  const profile = JSON.parse(await readFile(path, 'utf8')) as CpuProfile;
  const byId = new Map<number, CallFrame>(profile.nodes.map((n) => [n.id, n.callFrame]));
  const selfUs = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    total += dt;
    const cf = byId.get(id);
    const key = cf === undefined ? '(unknown)' : describe(cf);
    selfUs.set(key, (selfUs.get(key) ?? 0) + dt);
  });
  const idle = selfUs.get('(idle)') ?? 0;
  selfUs.delete('(idle)');
  const busy = total - idle;
  const frames = [...selfUs.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([frame, us]) => ({ frame, selfMs: us / 1000, selfPct: busy > 0 ? (us / busy) * 100 : 0 }));
  return { totalMs: total / 1000, busyMs: busy / 1000, frames };
}

/**
 * Prints the busiest profile in `dir` (the broker's main thread; a loader worker thread writes a nearly idle
 * one beside it) as a table of the top self-time frames.
 */
export async function printProfiles(dir: string, top = 25): Promise<void> {
  const names = (await readdir(dir)).filter((n) => n.endsWith('.cpuprofile'));
  const summaries = await Promise.all(names.map((n) => topSelfTime(join(dir, n), top)));
  const busiest = summaries.sort((a, b) => b.busyMs - a.busyMs)[0];
  if (busiest === undefined) {
    console.log(`\nno CPU profile was written to ${dir}`);
    return;
  }
  console.log(`\nFloe broker CPU profile: ${(busiest.busyMs / 1000).toFixed(1)} s busy of ${(busiest.totalMs / 1000).toFixed(1)} s sampled (it idles while baselines run); top self time, as % of busy time:\n`);
  console.log(formatTable(['self %', 'self ms', 'function'], busiest.frames.map((x) => [x.selfPct, Math.round(x.selfMs), x.frame])));
}
