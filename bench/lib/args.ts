/** Command-line options of the benchmarks: `--name=value` or `--flag`, everything else is an error. */
export class BenchArgs {
  private readonly values = new Map<string, string>();

  constructor(
    argv: readonly string[],
    private readonly usage: string,
  ) {
    for (const a of argv) {
      const m = /^--([a-z][a-z0-9-]*)(?:=(.*))?$/.exec(a);
      if (!m) this.fail(`unexpected argument '${a}'`);
      this.values.set(m[1] as string, m[2] ?? 'true');
    }
    if (this.values.has('help')) {
      process.stdout.write(usage + '\n');
      process.exit(0);
    }
  }

  private fail(message: string): never {
    process.stderr.write(`${message}\n\n${this.usage}\n`);
    process.exit(2);
  }

  flag(name: string): boolean {
    const v = this.values.get(name);
    return v !== undefined && v !== 'false';
  }

  string(name: string, fallback: string): string {
    return this.values.get(name) ?? fallback;
  }

  number(name: string, fallback: number): number {
    const v = this.values.get(name);
    if (v === undefined) return fallback;
    const n = Number(v);
    if (!Number.isFinite(n)) this.fail(`--${name} must be a number, got '${v}'`);
    return n;
  }

  /** A comma-separated list of numbers; sizes may end in k or m (KiB, MiB). */
  numbers(name: string, fallback: readonly number[]): number[] {
    const v = this.values.get(name);
    if (v === undefined) return [...fallback];
    return v.split(',').map((s) => {
      const m = /^(-?\d+(?:\.\d+)?)([kKmM]?)$/.exec(s.trim());
      if (!m) this.fail(`--${name} takes numbers like 16k,1m; got '${s}'`);
      const unit = (m[2] ?? '').toLowerCase();
      return Number(m[1]) * (unit === 'k' ? 1024 : unit === 'm' ? 1024 * 1024 : 1);
    });
  }
}
