/**
 * What the CLI prints of values that come from Redis (job data, errors, log lines, names,
 * ids, events): anyone who can write a queue chooses them, and a terminal obeys the control
 * characters in them (ESC and CSI sequences clear the screen or move the cursor, OSC retitles
 * the window, CR and LF make fake lines). The one place that escapes C0 and C1 controls.
 */

/** C0 controls, DEL and C1 controls. */
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;
/** The same without LF: a text's own line breaks (the CLI's tables, fields and lists). */
const CONTROLS_BUT_LF = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g;
/** What JSON.stringify leaves as it is: DEL and the C1 controls. */
const UNESCAPED_BY_JSON = /[\u007f-\u009f]/g;

const SHORT: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escaped(c: string): string {
  return SHORT[c] ?? `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`;
}

/** One value on one line: every control character written as an escape (`\x1b`, `\n`). */
export function printable(value: string): string {
  return value.replace(CONTROLS, escaped);
}

/** A text the CLI laid out in lines: its line feeds stay, every other control is escaped. */
export function printableLines(text: string): string {
  return text.replace(CONTROLS_BUT_LF, escaped);
}

/** JSON for a terminal: the controls JSON.stringify leaves raw become `\u00XX` escapes (the same JSON value). */
export function printableJson(json: string): string {
  return json.replace(UNESCAPED_BY_JSON, (c) => `\\u00${c.charCodeAt(0).toString(16)}`);
}
