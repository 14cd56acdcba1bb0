/**
 * Progress of a topic's catch-up: the closed segments its table does not hold yet. Tables turned on for a
 * topic with history (a backfill), a broker started on a log directory written with tiering off, or a
 * table catching up after its catalog was down all start with a backlog. While one is large (at least
 * `minSegments` segments), it is an episode: a start line with its size, a line every `reportEveryMs` or
 * 10 % with the share done, the rate and the time left, and an end line with the rate overall. Live
 * segments that close meanwhile join the episode's total.
 */

export interface Backlog {
  /** Closed segments not yet in the table (waiting, being copied, or copied and not yet committed). */
  readonly segments: number;
  readonly bytes: number;
}

export interface BacklogReport {
  readonly topic: string;
  readonly phase: 'started' | 'progress' | 'done';
  readonly segments: number;
  /** Bytes of the episode so far: done plus still to do. */
  readonly totalBytes: number;
  readonly doneBytes: number;
  /** 0 to 100. */
  readonly percent: number;
  readonly bytesPerSecond: number;
  /** Seconds left at the rate so far; undefined before anything was done. */
  readonly etaSeconds: number | undefined;
  readonly elapsedSeconds: number;
}

export interface BacklogProgressOptions {
  /** The topic's backlog now. */
  readonly backlog: (topic: string) => Backlog;
  /** A backlog of at least this many segments starts an episode. Default 3. */
  readonly minSegments?: number;
  /** Longest time between progress lines. Default 30 s. */
  readonly reportEveryMs?: number;
  readonly now?: () => number;
  readonly report: (r: BacklogReport) => void;
}

interface Episode {
  readonly startedAt: number;
  /** Segments of the backlog when it started (those queued in the same turn included). */
  startSegments: number;
  startReported: boolean;
  /** Backlog bytes when it started, plus every segment enqueued since. */
  totalBytes: number;
  lastReportAt: number;
  lastReportedDecile: number;
}

export class BacklogProgress {
  private readonly episodes = new Map<string, Episode>();
  private readonly now: () => number;
  private readonly minSegments: number;
  private readonly reportEveryMs: number;

  constructor(private readonly options: BacklogProgressOptions) {
    this.now = options.now ?? Date.now;
    this.minSegments = options.minSegments ?? 3;
    this.reportEveryMs = options.reportEveryMs ?? 30_000;
  }

  /**
   * A segment of `bytes` joined the topic's backlog. The start line goes out after the current turn, so
   * that it counts every segment queued together (a backfill queues the whole history at once).
   */
  enqueued(topic: string, bytes: number): void {
    const e = this.episodes.get(topic);
    if (e !== undefined) {
      e.totalBytes += bytes;
      if (!e.startReported) e.startSegments++;
      return;
    }
    const backlog = this.options.backlog(topic);
    if (backlog.segments < this.minSegments) return;
    const now = this.now();
    const started: Episode = { startedAt: now, startSegments: backlog.segments, startReported: false, totalBytes: backlog.bytes, lastReportAt: now, lastReportedDecile: 0 };
    this.episodes.set(topic, started);
    setImmediate(() => {
      if (this.episodes.get(topic) === started) this.reportStart(topic, started);
    }).unref();
  }

  private reportStart(topic: string, e: Episode): void {
    if (e.startReported) return;
    e.startReported = true;
    const elapsedSeconds = (this.now() - e.startedAt) / 1000;
    this.options.report({ topic, phase: 'started', segments: e.startSegments, totalBytes: e.totalBytes, doneBytes: 0, percent: 0, bytesPerSecond: 0, etaSeconds: undefined, elapsedSeconds });
  }

  /** Segments of the topic reached the table (or left the backlog). */
  settled(topic: string): void {
    const e = this.episodes.get(topic);
    if (e === undefined) return;
    this.reportStart(topic, e);
    const backlog = this.options.backlog(topic);
    const now = this.now();
    if (backlog.segments === 0) {
      this.episodes.delete(topic);
      this.options.report(this.reportOf(topic, 'done', e, backlog, now));
      return;
    }
    const r = this.reportOf(topic, 'progress', e, backlog, now);
    const decile = Math.floor(r.percent / 10);
    if (decile > e.lastReportedDecile || now - e.lastReportAt >= this.reportEveryMs) {
      e.lastReportAt = now;
      e.lastReportedDecile = decile;
      this.options.report(r);
    }
  }

  /** The topic's episode as it stands, or undefined when it has none. */
  current(topic: string): BacklogReport | undefined {
    const e = this.episodes.get(topic);
    return e === undefined ? undefined : this.reportOf(topic, 'progress', e, this.options.backlog(topic), this.now());
  }

  /** The topic stopped being tiered: its episode ends without a report. */
  forget(topic: string): void {
    this.episodes.delete(topic);
  }

  private reportOf(topic: string, phase: BacklogReport['phase'], e: Episode, backlog: Backlog, now: number): BacklogReport {
    const totalBytes = Math.max(e.totalBytes, backlog.bytes);
    const doneBytes = Math.max(0, totalBytes - backlog.bytes);
    const elapsedSeconds = (now - e.startedAt) / 1000;
    const bytesPerSecond = elapsedSeconds > 0 ? doneBytes / elapsedSeconds : 0;
    return {
      topic,
      phase,
      segments: backlog.segments,
      totalBytes,
      doneBytes,
      percent: totalBytes > 0 ? Math.min(100, (100 * doneBytes) / totalBytes) : 100,
      bytesPerSecond,
      etaSeconds: bytesPerSecond > 0 ? backlog.bytes / bytesPerSecond : undefined,
      elapsedSeconds,
    };
  }
}
