/**
 * A progress line for long `floe` operations: on a terminal, one line on stderr redrawn after each step
 * (`compacting kafka.orders: 3/8 partitions, 12.0 MiB read, 4.1 MiB/s, ETA 2 s`); elsewhere (pipes, CI,
 * tests) nothing, so scripts read only the summary on stdout.
 */
import type { CliIO } from './commands.js';

export class Progress {
  private readonly started = performance.now();
  private doneSteps = 0;
  private drawn = false;

  constructor(
    private readonly io: CliIO,
    private readonly label: string,
    private readonly total: number,
    private readonly unit: string,
  ) {
    this.draw(0);
  }

  /** One step finished; `bytes` is the total processed so far. */
  tick(bytes: number): void {
    this.doneSteps++;
    this.draw(bytes);
  }

  /** `steps` finished so far (for work whose steps finish out of the caller's sight); `bytes` processed. */
  set(steps: number, bytes: number): void {
    this.doneSteps = Math.min(this.total, Math.max(0, steps));
    this.draw(bytes);
  }

  done(): void {
    if (this.drawn) this.io.stderr('\n');
  }

  seconds(): number {
    return (performance.now() - this.started) / 1000;
  }

  private draw(bytes: number): void {
    if (!this.io.tty) return;
    const s = this.seconds();
    const rate = s > 0 ? bytes / s : 0;
    const left = this.total - this.doneSteps;
    const eta = this.doneSteps > 0 ? (s / this.doneSteps) * left : undefined;
    const width = 20;
    const filled = this.total > 0 ? Math.round((this.doneSteps / this.total) * width) : width;
    const bar = '#'.repeat(filled) + '.'.repeat(width - filled);
    const text = `${this.label} [${bar}] ${this.doneSteps}/${this.total} ${this.unit}, ${mib(bytes)} read, ${mib(rate)}/s, ETA ${eta === undefined ? '?' : `${Math.ceil(eta)} s`}`;
    this.io.stderr(`\r${text}\u001b[K`);
    this.drawn = true;
  }
}

function mib(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}
