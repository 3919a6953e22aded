/**
 * Every operation's Lua header says which keys and arguments it takes (`KEYS[..]` lines,
 * `ARGV[n]  name: ...` lines, `ARGV[n..]  name: ...` for a variadic tail); its definition
 * (lib/core/<feature>/scripts.ts) says how a call builds them. These checks keep the two
 * from drifting apart. Pure: no Redis.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { keyCountOf, scriptDefinitions } from '../../lib/core/redis/script-code.js';
import type { AnyScript } from '../../lib/core/redis/script-def.js';
import { settleBatch } from '../../lib/core/settles/settle-items.js';

interface Header {
  keys: number;
  /** ARGV names before the variadic tail, in order. */
  fixed: string[];
  tail: string | undefined;
}

const ARGV_LINE = /^\s*ARGV\[(\d+)(\.\.)?\]\s+(\w+):/;
const KEYS_LINE = /^\s*KEYS\[(?:\d+\.\.)?(\d+)\]\s/;

function headerOf(file: string): Header {
  const src = readFileSync(join(process.cwd(), 'lib/core', file), 'utf8');
  const end = src.indexOf(']]');
  expect([file, src.startsWith('--[[') && end > 0]).toEqual([file, true]);
  const header: Header = { keys: 0, fixed: [], tail: undefined };
  for (const line of src.slice(0, end).split('\n')) {
    const k = KEYS_LINE.exec(line);
    if (k) header.keys = Math.max(header.keys, Number(k[1]));
    if (!/^\s*ARGV\[/.test(line)) continue;
    const a = ARGV_LINE.exec(line);
    // every ARGV line names its argument, at the next position, and nothing follows a tail
    expect([file, line.trim(), a !== null]).toEqual([file, line.trim(), true]);
    expect([file, line.trim(), header.tail]).toEqual([file, line.trim(), undefined]);
    expect([file, Number(a![1])]).toEqual([file, header.fixed.length + 1]);
    if (a![2]) header.tail = a![3];
    else header.fixed.push(a![3]!);
  }
  return header;
}

/** An empty tail for the encoders that read it as something other than a list. */
const EMPTY_TAIL: Record<string, unknown> = { items: settleBatch([]) };

/**
 * The definition's encoder called with named arguments that each carry their own name
 * (`«name»`; an empty list for the tail): the ARGV it builds, and the header names it read, in order.
 */
function encodeByName(def: AnyScript, header: Header): { argv: unknown[]; read: string[] } {
  const read: string[] = [];
  const names = new Set([...header.fixed, header.tail]);
  const args = new Proxy(
    {},
    {
      get(_target, prop) {
        if (typeof prop !== 'string' || !names.has(prop)) return undefined;
        if (!read.includes(prop)) read.push(prop);
        return prop === header.tail ? (EMPTY_TAIL[prop] ?? []) : `«${prop}»`;
      },
    },
  );
  return { argv: (def.encode as (a: unknown) => unknown[])(args), read };
}

const defs = scriptDefinitions();

test('every operation has its own name and Lua file', () => {
  expect(new Set(defs.map((d) => d.name)).size).toBe(defs.length);
  expect(new Set(defs.map((d) => d.file)).size).toBe(defs.length);
});

describe.each(defs.map((d) => [d.name, d] as const))('%s', (_name, def) => {
  const header = headerOf(def.file);

  test('passes the keys its header lists', () => {
    expect(keyCountOf(def)).toBe(header.keys);
  });

  test('encodes the arguments its header lists, in that order', () => {
    const { argv, read } = encodeByName(def, header);
    // a value passed as it is sits at its header's position
    header.fixed.forEach((name, i) => {
      if (typeof argv[i] === 'string' && (argv[i] as string).startsWith('«')) expect([i + 1, argv[i]]).toEqual([i + 1, `«${name}»`]);
    });
    const markers = argv.filter((v) => typeof v === 'string' && v.startsWith('«'));
    expect(markers).toEqual(header.fixed.filter((n) => markers.includes(`«${n}»`)).map((n) => `«${n}»`));
    // the arguments it reads come in the header's order; the fixed part is exactly as long
    expect(read.filter((n) => n !== header.tail)).toEqual(header.fixed.filter((n) => read.includes(n)));
    if (header.tail === undefined) expect(argv.length).toBe(header.fixed.length);
    else expect(argv.length).toBeGreaterThan(header.fixed.length);
  });
});
