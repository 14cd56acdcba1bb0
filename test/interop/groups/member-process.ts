/**
 * A group member running in its own process, so a test can SIGKILL, SIGSTOP or SIGTERM it. Every member
 * driver (kcat, the Python scripts, the JS member scripts) prints one JSON object per line on stdout:
 *
 *   {"e":"record","p":<partition>,"o":<offset>,"k":"<key>"}   a record handed to the application
 *   {"e":"commit","p":<partition>,"o":<next offset>}         a commit the broker acknowledged
 *   {"e":"commit_error","error":"<what the client said>"}    a commit the broker (or client) refused
 *   {"e":"assigned","generation":<n>,"partitions":[...]}     a member joined a generation (generation and
 *                                                            "memberId" where the client tells them)
 *   {"e":"closed"}                                           the member left the group on SIGTERM
 *
 * Records are printed (and flushed) before they are committed, so a SIGKILL can lose only uncommitted
 * output. Lines that are not JSON (kcat's own chatter) are kept with stderr for failure messages.
 */
import { spawn, type ChildProcess } from 'node:child_process';

export interface MemberEvent {
  readonly e: 'record' | 'commit' | 'commit_error' | 'assigned' | 'closed';
  readonly p?: number;
  readonly generation?: number;
  readonly partitions?: number[];
  /** On `assigned` lines of members that know it: their member id. */
  readonly memberId?: string;
  readonly o?: number;
  readonly k?: string;
  readonly error?: string;
  /** When the test process read the line (ms since the epoch), to order events of different members. */
  readonly at?: number;
}

export interface Consumption {
  readonly member: string;
  readonly partition: number;
  readonly offset: number;
  readonly key: string;
  /** When the test read the record's line (ms since the epoch); orders consumptions of different members. */
  readonly at?: number;
  /**
   * Whether the member's own commit past this record was acknowledged while it still held the generation
   * it consumed the record in: after the record line, before the member's next `assigned` line, and before
   * any refused commit or re-read of the record (the drivers commit synchronously what they consumed before
   * taking more). Undefined for a member that prints no commits at all (kcat auto-commits in the background).
   */
  readonly committed?: boolean;
}

export class MemberProcess {
  readonly events: MemberEvent[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly child: ChildProcess;
  private partial = '';
  private log = '';

  constructor(
    /** The member's name, also its client.id, so the broker's DescribeGroups shows which process is which. */
    readonly name: string,
    cmd: string,
    args: readonly string[],
  ) {
    this.child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.exited = new Promise((resolve) => this.child.once('exit', (code, signal) => resolve({ code, signal })));
    this.child.once('error', (err) => (this.log += `spawn failed: ${err.message}\n`));
    this.child.stdout?.on('data', (chunk: Buffer) => this.onStdout(chunk));
    this.child.stderr?.on('data', (chunk: Buffer) => (this.log += chunk.toString()));
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  signal(sig: NodeJS.Signals): void {
    if (this.running) this.child.kill(sig);
  }

  /** SIGTERM, and SIGKILL if it has not exited within `graceMs`. */
  async stop(graceMs = 10_000): Promise<void> {
    if (!this.running) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  consumed(): Consumption[] {
    const reportsCommits = this.events.some((ev) => ev.e === 'commit' || ev.e === 'commit_error');
    const out: Consumption[] = [];
    this.events.forEach((ev, i) => {
      if (ev.e !== 'record') return;
      const partition = ev.p as number;
      const offset = ev.o as number;
      let committed: boolean | undefined;
      if (reportsCommits) {
        committed = false;
        for (let j = i + 1; j < this.events.length; j++) {
          const later = this.events[j] as MemberEvent;
          // A new generation, a refused commit (every driver commits what it consumed before taking more), or
          // the member reading the partition again from at or before this record: its commit did not land.
          if (later.e === 'assigned' || later.e === 'commit_error') break;
          if (later.e === 'record' && later.p === partition && (later.o ?? -1) <= offset) break;
          if (later.e === 'commit' && later.p === partition && (later.o ?? -1) > offset) {
            committed = true;
            break;
          }
        }
      }
      out.push({ member: this.name, partition, offset, key: ev.k as string, at: ev.at, committed });
    });
    return out;
  }

  count(kind: MemberEvent['e']): number {
    return this.events.reduce((n, ev) => n + (ev.e === kind ? 1 : 0), 0);
  }

  /** stderr and non-JSON stdout, for failure messages. */
  output(): string {
    return this.log;
  }

  private onStdout(chunk: Buffer): void {
    const lines = (this.partial + chunk.toString()).split('\n');
    this.partial = lines.pop() ?? '';
    for (const line of lines) {
      if (line.trim() === '') continue;
      try {
        this.events.push({ ...(JSON.parse(line) as MemberEvent), at: Date.now() });
      } catch {
        this.log += `${line}\n`;
      }
    }
  }
}

/** Polls `cond` every 50 ms until it holds; throws with `describe()` after `timeoutMs`. */
export async function waitFor(what: string, cond: () => boolean | Promise<boolean>, timeoutMs: number, describe: () => string | Promise<string> = () => ''): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await cond()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}\n${await describe()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
