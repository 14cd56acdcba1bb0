/**
 * Start-up and shutdown as the admin port's `/ready` reports them: the broker names the steps it must
 * finish before it serves (listener bound, logs recovered, tables attached), marks each one done, and marks
 * the whole broker stopping on shutdown. Ready means: every step done and not stopping.
 */
export type ReadinessState = 'starting' | 'ready' | 'stopping';

export interface ReadinessReport {
  readonly status: ReadinessState;
  /** Steps not finished yet, in the order they were declared. */
  readonly pending: readonly string[];
  readonly done: readonly string[];
}

export class Readiness {
  private readonly steps: readonly string[];
  private readonly finished = new Set<string>();
  private stopped = false;

  constructor(steps: readonly string[]) {
    this.steps = [...steps];
  }

  /** Marks a declared step finished (unknown steps are a programming error). */
  done(step: string): void {
    if (!this.steps.includes(step)) throw new Error(`readiness step '${step}' was not declared (declared: ${this.steps.join(', ')})`);
    this.finished.add(step);
  }

  /** The broker is shutting down: not ready any more, whatever was finished. */
  stopping(): void {
    this.stopped = true;
  }

  get ready(): boolean {
    return !this.stopped && this.steps.every((s) => this.finished.has(s));
  }

  report(): ReadinessReport {
    const status: ReadinessState = this.stopped ? 'stopping' : this.ready ? 'ready' : 'starting';
    return { status, pending: this.steps.filter((s) => !this.finished.has(s)), done: this.steps.filter((s) => this.finished.has(s)) };
  }
}
