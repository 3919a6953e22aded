/**
 * ioredis's debug output (the `debug` package's namespace `ioredis:*`) prints every command
 * with its arguments: AUTH and HELLO with the password, job data. The CLI turns it off before
 * ioredis is loaded, whatever DEBUG asks for.
 */

/** The negation appended to DEBUG: the `debug` package lets a skip win over every other pattern. */
const NO_IOREDIS = '-ioredis:*';

/** Would this DEBUG value turn ioredis's output on? (`*`, `ioredis:*`, `ioredis:redis`, ...) */
function enablesIoredis(debug: string): boolean {
  const patterns = debug.split(/[\s,]+/).filter((p) => p !== '' && !p.startsWith('-'));
  return patterns.some((p) => new RegExp(`^${p.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`).test('ioredis:redis'));
}

/**
 * DEBUG without ioredis's namespace, and whether it had to be turned off (the CLI says so on
 * stderr). Unset or empty stays as it is.
 */
export function debugWithoutIoredis(debug: string | undefined): { debug: string | undefined; stripped: boolean } {
  if (!debug) return { debug, stripped: false };
  return { debug: `${debug},${NO_IOREDIS}`, stripped: enablesIoredis(debug) };
}
