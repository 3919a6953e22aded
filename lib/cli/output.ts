import { Redactor } from '../core/redis/redact.js';

/**
 * Where the CLI writes: results on stdout (JSON with --json, text otherwise), messages on
 * stderr. Every text that leaves goes through the redactor: a Redis URL may hold a password.
 */
export class Output {
  constructor(
    readonly json: boolean,
    private readonly redactor: Redactor,
  ) {}

  /** A command's result: `value` as JSON, or `text()` for people. */
  result(value: unknown, text: () => string): void {
    this.out(this.json ? JSON.stringify(value, null, 2) : text());
  }

  /** One line of a stream of results (watch): one JSON document per line with --json. */
  line(value: unknown, text: () => string): void {
    this.out(this.json ? JSON.stringify(value) : text());
  }

  /** A message for the operator (stderr), never part of the result. */
  note(text: string): void {
    process.stderr.write(`${this.redactor.text(text)}\n`);
  }

  /** The error a command ended with: JSON with --json, else one line; on stderr. */
  error(err: { code?: string; message: string }, exitCode: number): void {
    const message = this.redactor.text(err.message);
    // the engine's messages already begin with 'relq <operation>:'
    const text = message.startsWith('relq ') ? message : `relq: ${message}`;
    const body = this.json ? JSON.stringify({ error: { code: err.code ?? 'RELQ_CLI', message, exitCode } }) : text;
    process.stderr.write(`${body}\n`);
  }

  private out(text: string): void {
    process.stdout.write(`${this.redactor.text(text)}\n`);
  }
}

/** Rows as aligned columns under upper-case headers. */
export function table(headers: string[], rows: Array<Array<string | number>>): string {
  const cells = [headers.map((h) => h.toUpperCase()), ...rows.map((r) => r.map(String))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => r[i]!.length)));
  return cells.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n');
}

/** `key  value` lines, keys aligned. */
export function fields(entries: Array<[string, string | number | boolean | undefined]>): string {
  const shown = entries.filter(([, v]) => v !== undefined) as Array<[string, string | number | boolean]>;
  const width = Math.max(...shown.map(([k]) => k.length));
  return shown.map(([k, v]) => `${k.padEnd(width)}  ${typeof v === 'boolean' ? (v ? 'yes' : 'no') : v}`).join('\n');
}

/** An epoch-ms time for people (ISO 8601, UTC); '' for none. */
export function time(ms: number | undefined): string {
  return ms === undefined ? '' : new Date(ms).toISOString();
}

/** time() for fields(): undefined for none, so that the line is left out. */
export function optTime(ms: number | undefined): string | undefined {
  return ms === undefined ? undefined : time(ms);
}
