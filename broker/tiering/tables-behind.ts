/**
 * Which topics' tables are behind their logs because tiering keeps failing, and why: the catalog is
 * unreachable (an external catalog down), the catalog refused a request, the table is not Floe's (never
 * taken over), the object store failed, or something else. A topic enters at its first failure, keeps the
 * time of that failure while the failures go on, and leaves at its next landed commit (or when its table
 * opens, for a table that could not be opened). Read by `floe_table_behind_seconds` and the log lines.
 */
import { failureReason, type FailureReason } from '../../tiering/plugin/failure-reason.js';

export type BehindReason = FailureReason;

export interface Behind {
  readonly reason: BehindReason;
  /** When the failures began (ms since the epoch). */
  readonly sinceMs: number;
  /** The last failure's message. */
  readonly message: string;
}

export class TablesBehind {
  private readonly topics = new Map<string, Behind>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Records a failure of the topic's tiering; returns its entry. */
  failed(topic: string, err: unknown): Behind {
    const prior = this.topics.get(topic);
    const entry: Behind = { reason: failureReason(err), sinceMs: prior?.sinceMs ?? this.now(), message: err instanceof Error ? err.message : String(err) };
    this.topics.set(topic, entry);
    return entry;
  }

  /** The topic's table caught up (a commit landed, or it opened). True when it was behind. */
  recovered(topic: string): boolean {
    return this.topics.delete(topic);
  }

  get(topic: string): Behind | undefined {
    return this.topics.get(topic);
  }

  entries(): IterableIterator<[string, Behind]> {
    return this.topics.entries();
  }
}
