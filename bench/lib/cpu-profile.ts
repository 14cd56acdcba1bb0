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
  readonly children?: readonly number[];
}
export interface CpuProfile {
  /** CLOCK_MONOTONIC, in microseconds: the clock of `process.hrtime`. */
  readonly startTime: number;
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

/** A V8 `.cpuprofile`, parsed. */
export async function readProfile(path: string): Promise<CpuProfile> {
  return JSON.parse(await readFile(path, 'utf8')) as CpuProfile;
}

/**
 * Self time per function of `profile`, heaviest first, the first `top` of them, as shares of the busy time
 * (a benchmark's broker idles while the baselines run, so shares of the total say little). With `window`
 * ([from, to) in microseconds of CLOCK_MONOTONIC, `process.hrtime`'s clock), only the samples taken in it.
 */
export function topSelfTime(profile: CpuProfile, top = 15, window?: readonly [number, number]): ProfileSummary {
  const byId = new Map<number, CallFrame>(profile.nodes.map((n) => [n.id, n.callFrame]));
  const selfUs = new Map<string, number>();
  let total = 0;
  let t = profile.startTime;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    t += dt;
    if (window !== undefined && (t < window[0] || t >= window[1])) return;
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
 * The busiest profile in `dir`: the broker's main thread (a loader worker thread writes a nearly idle one
 * beside it); undefined when none was written.
 */
export async function busiestProfile(dir: string): Promise<CpuProfile | undefined> {
  const names = (await readdir(dir)).filter((n) => n.endsWith('.cpuprofile'));
  const profiles = await Promise.all(names.map(async (n) => {
    const profile = await readProfile(join(dir, n));
    return { profile, busyMs: topSelfTime(profile, 0).busyMs };
  }));
  return profiles.sort((a, b) => b.busyMs - a.busyMs)[0]?.profile;
}

/** Prints the top self-time frames of `profile` as a table. */
export function printProfile(profile: CpuProfile, top = 25): void {
  const s = topSelfTime(profile, top);
  console.log(`\nFloe broker CPU profile: ${(s.busyMs / 1000).toFixed(1)} s busy of ${(s.totalMs / 1000).toFixed(1)} s sampled (it idles while baselines run); top self time, as % of busy time:\n`);
  console.log(formatTable(['self %', 'self ms', 'function'], s.frames.map((x) => [x.selfPct, Math.round(x.selfMs), x.frame])));
}

/** Prints the busiest profile in `dir` (see busiestProfile) as a table of the top self-time frames. */
export async function printProfiles(dir: string, top = 25): Promise<void> {
  const busiest = await busiestProfile(dir);
  if (busiest === undefined) console.log(`\nno CPU profile was written to ${dir}`);
  else printProfile(busiest, top);
}

/** A stretch of consecutive busy samples: the thread did not return to its event loop for `ms`. */
export interface BusyStretch {
  /** Start, in microseconds of CLOCK_MONOTONIC (`process.hrtime.bigint() / 1000n`). */
  readonly startUs: number;
  readonly ms: number;
  /** The longest gap between two samples in it: the sampler could not run the thread (another took its core). */
  readonly longestGapMs: number;
  /** The heaviest self-time frames in it, with their ms. */
  readonly frames: readonly (readonly [string, number])[];
  /** The heaviest frames of this repository's code on the stacks, by inclusive time (what the thread was doing). */
  readonly ours: readonly (readonly [string, number])[];
}

/**
 * The `n` longest busy stretches of `profile` that start inside [fromUs, toUs): each is time the
 * thread spent away from its event loop, so every request that arrived during it waited at least that long.
 */
export function longestBusyStretches(profile: CpuProfile, fromUs: number, toUs: number, n = 5): BusyStretch[] {
  const byId = new Map<number, ProfileNode>(profile.nodes.map((x) => [x.id, x]));
  const parent = new Map<number, number>();
  for (const x of profile.nodes) for (const c of x.children ?? []) parent.set(c, x.id);
  const ourFrame = /\/(broker|tiering|iceberg|protocol)\//;
  const stretches: BusyStretch[] = [];
  let t = profile.startTime;
  let start = -1;
  let samples: [number, number][] = [];
  const close = (end: number): void => {
    if (start >= fromUs && start < toUs && samples.length > 0) {
      const self = new Map<string, number>();
      const ours = new Map<string, number>();
      let gap = 0;
      for (const [id, dt] of samples) {
        gap = Math.max(gap, dt);
        const node = byId.get(id);
        const key = node === undefined ? '(unknown)' : describe(node.callFrame);
        self.set(key, (self.get(key) ?? 0) + dt);
        const seen = new Set<string>();
        for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
          const cf = byId.get(cur)?.callFrame;
          if (cf === undefined || !ourFrame.test(cf.url)) continue;
          const k = describe(cf);
          if (seen.has(k)) continue;
          seen.add(k);
          ours.set(k, (ours.get(k) ?? 0) + dt);
        }
      }
      const top = (m: Map<string, number>, k: number): [string, number][] => [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, k).map(([f, us]) => [f, us / 1000]);
      stretches.push({ startUs: start, ms: (end - start) / 1000, longestGapMs: gap / 1000, frames: top(self, 4), ours: top(ours, 6) });
    }
    start = -1;
    samples = [];
  };
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    t += dt;
    const idle = byId.get(id)?.callFrame.functionName === '(idle)';
    if (idle) {
      if (start >= 0) close(t - dt);
      return;
    }
    if (start < 0) start = t - dt;
    samples.push([id, dt]);
  });
  if (start >= 0) close(t);
  return stretches.sort((a, b) => b.ms - a.ms).slice(0, n);
}

