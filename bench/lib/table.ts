/**
 * Output for benchmarks: progress lines on stderr while running (so stdout stays the results) and aligned
 * tables, as plain text and as Markdown for bench/RESULTS.md.
 */

export type Cell = string | number;

function cellText(c: Cell): string {
  if (typeof c === 'string') return c;
  if (!Number.isFinite(c)) return '-';
  if (Number.isInteger(c)) return c.toLocaleString('en-US');
  return Math.abs(c) >= 100 ? Math.round(c).toLocaleString('en-US') : c.toFixed(Math.abs(c) >= 10 ? 1 : 2);
}

/** A plain-text table with right-aligned numbers, for the terminal. */
export function formatTable(headers: readonly string[], rows: readonly (readonly Cell[])[]): string {
  const text = rows.map((r) => r.map(cellText));
  const widths = headers.map((h, i) => Math.max(h.length, ...text.map((r) => (r[i] ?? '').length)));
  const numeric = headers.map((_, i) => rows.every((r) => typeof r[i] === 'number' || /^[\d,.%-]+$/.test(cellText(r[i] ?? ''))));
  const line = (cells: readonly string[]) =>
    cells.map((c, i) => (numeric[i] ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0))).join('  ').trimEnd();
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...text.map(line)].join('\n');
}

/** The same table in Markdown, to paste into bench/RESULTS.md. */
export function formatMarkdownTable(headers: readonly string[], rows: readonly (readonly Cell[])[]): string {
  const numeric = headers.map((_, i) => rows.every((r) => typeof r[i] === 'number'));
  const out = [`| ${headers.join(' | ')} |`, `|${numeric.map((n) => (n ? '---:' : '---')).join('|')}|`];
  for (const r of rows) out.push(`| ${headers.map((_, i) => cellText(r[i] ?? '')).join(' | ')} |`);
  return out.join('\n');
}

const started = process.hrtime.bigint();

/** A progress line on stderr, prefixed with the seconds since the benchmark started. */
export function progress(message: string): void {
  const s = Number(process.hrtime.bigint() - started) / 1e9;
  process.stderr.write(`[${s.toFixed(1).padStart(6)}s] ${message}\n`);
}
