/**
 * Summarises a V8 `.cpuprofile` (from `node --cpu-prof`): self time per function, heaviest first, so a
 * benchmark can say where the broker spends its time.
 */
import { readFile } from 'node:fs/promises';

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
  readonly selfPct: number;
}

function describe(cf: CallFrame): string {
  const name = cf.functionName === '' ? '(anonymous)' : cf.functionName;
  if (cf.url === '') return name;
  const file = cf.url.replace(/^file:\/\//, '').replace(/^.*?\/(broker|protocol|tiering|iceberg|node_modules)\//, '$1/');
  return `${name} (${file}:${cf.lineNumber + 1})`;
}

/** Self time per function of the profile at `path`, heaviest first, the first `top` of them. */
export async function topSelfTime(path: string, top = 15): Promise<{ totalMs: number; frames: ProfileFrame[] }> {
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
  const frames = [...selfUs.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([frame, us]) => ({ frame, selfMs: us / 1000, selfPct: total > 0 ? (us / total) * 100 : 0 }));
  return { totalMs: total / 1000, frames };
}
