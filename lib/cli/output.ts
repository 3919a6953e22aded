import { Redactor } from '../core/redis/redact.js';
import { printable, printableJson, printableLines } from './printable.js';

/**
 * Where the CLI writes: results on stdout (JSON with --json, text otherwise), messages on
 * stderr. Every text that leaves goes through the redactor (a Redis URL may hold a password),
 * then is made printable (values from Redis may hold terminal control sequences).
 */
export class Output {
  constructor(
    readonly json: boolean,
    private readonly redactor: Redactor,
  ) {}

  /** A command's result: `value` as JSON, or `text()` for people. */
  result(value: unknown, text: () => string): void {
    if (this.json) this.out(JSON.stringify(value, null, 2), printableJson);
    else this.out(text(), printableLines);
  }

  /** One line of a stream of results (watch): one JSON document per line with --json. */
  line(value: unknown, text: () => string): void {
    if (this.json) this.out(JSON.stringify(value), printableJson);
    else this.out(text(), printable);
  }

  /** A message for the operator (stderr), never part of the result: one line. */
  note(text: string): void {
    process.stderr.write(`${printable(this.redactor.text(text))}\n`);
  }

  /** The error a command ended with: JSON with --json, else one line; on stderr. */
  error(err: { code?: string; message: string }, exitCode: number): void {
    const message = this.redactor.text(err.message);
    // the engine's messages already begin with 'relq <operation>:'
    const text = message.startsWith('relq ') ? message : `relq: ${message}`;
    const body = this.json ? printableJson(JSON.stringify({ error: { code: err.code ?? 'RELQ_CLI', message, exitCode } })) : printable(text);
    process.stderr.write(`${body}\n`);
  }

  /** `text` on stdout, redacted, then made printable as what it is (one line, lines, JSON). */
  private out(text: string, printableAs: (text: string) => string): void {
    process.stdout.write(`${printableAs(this.redactor.text(text))}\n`);
  }
}

/** Rows as aligned columns under upper-case headers; each cell on one line, made printable. */
export function table(headers: string[], rows: Array<Array<string | number>>): string {
  const cells = [headers.map((h) => h.toUpperCase()), ...rows.map((r) => r.map((c) => printable(String(c))))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => r[i]!.length)));
  return cells.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n');
}

/** `key  value` lines, keys aligned; each value on one line, made printable. */
export function fields(entries: Array<[string, string | number | boolean | undefined]>): string {
  const shown = entries.filter(([, v]) => v !== undefined) as Array<[string, string | number | boolean]>;
  const width = Math.max(...shown.map(([k]) => k.length));
  return shown.map(([k, v]) => `${k.padEnd(width)}  ${typeof v === 'boolean' ? (v ? 'yes' : 'no') : printable(String(v))}`).join('\n');
}

/** An epoch-ms time for people (ISO 8601, UTC); '' for none. */
export function time(ms: number | undefined): string {
  return ms === undefined ? '' : new Date(ms).toISOString();
}

/** time() for fields(): undefined for none, so that the line is left out. */
export function optTime(ms: number | undefined): string | undefined {
  return ms === undefined ? undefined : time(ms);
}
