import { MAX_JOB_ID_LENGTH, MAX_JSON_DEPTH, MAX_QUEUE_NAME_LENGTH } from './defaults.js';
import { PayloadTooLargeError, ValidationError } from './errors.js';
import { messageOf } from './thrown.js';

// Printable text with no control characters; braces would change a key's hash slot.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
// Half of a surrogate pair alone is not text: it cannot round-trip through UTF-8.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function assertText(field: string, value: string): void {
  if (CONTROL.test(value)) throw new ValidationError(field, 'must not contain control characters');
  if (LONE_SURROGATE.test(value)) throw new ValidationError(field, 'must be well-formed text (it holds a lone UTF-16 surrogate)');
}

/** A non-empty, printable name of at most MAX_QUEUE_NAME_LENGTH characters (queues, prefixes, groups). */
function assertName(name: unknown, field: string): asserts name is string {
  if (typeof name !== 'string' || name.length === 0) {
    throw new ValidationError(field, 'must be a non-empty string');
  }
  if (name.length > MAX_QUEUE_NAME_LENGTH) {
    throw new ValidationError(field, `must be at most ${MAX_QUEUE_NAME_LENGTH} characters, got ${name.length}`);
  }
  assertText(field, name);
}

/** A fairness group's name: a name, with no brace (it is part of its queue's keys, never a tag). */
export function assertGroupName(name: unknown, field: string): asserts name is string {
  assertName(name, field);
  if (/[{}]/.test(name)) throw new ValidationError(field, "must not contain '{' or '}'");
}

export function assertQueueName(name: unknown, field = 'queue name'): asserts name is string {
  assertName(name, field);
  if (!/^[^{}]*(\{[^{}]+\}[^{}]*)?$/.test(name)) {
    throw new ValidationError(field, "may hold '{' and '}' only as one non-empty tag, like '{orders}-email': the tag picks the Redis Cluster slot (redis/keys.ts queueTag)");
  }
}

/**
 * A prefix has no ':' so that `{prefix:name}` can never be read two ways, and no glob
 * character, so that an ACL key pattern made from it (`~{prefix:*`) matches its own keys only.
 */
export function assertPrefix(prefix: unknown): asserts prefix is string {
  assertName(prefix, 'prefix');
  if (prefix.includes(':')) throw new ValidationError('prefix', "must not contain ':'");
  if (/[{}]/.test(prefix)) throw new ValidationError('prefix', "must not contain '{' or '}' (they would change the Redis Cluster hash slot)");
  if (/[*?[\]\\]/.test(prefix)) {
    throw new ValidationError('prefix', "must not contain '*', '?', '[', ']' or '\\' (in an ACL key pattern they would match other prefixes' keys)");
  }
}

export function assertJobId(id: unknown, field = 'jobId'): asserts id is string {
  if (typeof id !== 'string' || id.length === 0) throw new ValidationError(field, 'must be a non-empty string');
  if (id.length > MAX_JOB_ID_LENGTH) {
    throw new ValidationError(field, `must be at most ${MAX_JOB_ID_LENGTH} characters, got ${id.length}`);
  }
  assertText(field, id);
}

/**
 * The id a new job is given: as any job id, and not '.' or '..', which URLs drop as dot
 * segments, so that a dashboard could neither show nor manage the job. Reads and management
 * still take them (assertJobId) for jobs that have them already.
 */
export function assertNewJobId(id: unknown, field = 'jobId'): asserts id is string {
  assertJobId(id, field);
  if (id === '.' || id === '..') throw new ValidationError(field, `must not be '${id}' (URLs drop it as a dot segment)`);
}

export function assertInt(
  field: string,
  value: unknown,
  { min = 0, max = Number.MAX_SAFE_INTEGER }: { min?: number; max?: number } = {},
): asserts value is number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new ValidationError(field, `must be a finite number, got ${describe(value)}`);
  }
  if (!Number.isInteger(value)) throw new ValidationError(field, `must be a whole number, got ${value}`);
  if (value < min || value > max) throw new ValidationError(field, `must be between ${min} and ${max}, got ${value}`);
}

export function assertNumber(field: string, value: unknown, min: number, max: number): asserts value is number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    throw new ValidationError(field, `must be a number between ${min} and ${max}, got ${describe(value)}`);
  }
}

export function assertString(field: string, value: unknown, maxLength = 1024): asserts value is string {
  if (typeof value !== 'string') throw new ValidationError(field, `must be a string, got ${describe(value)}`);
  if (value.length > maxLength) throw new ValidationError(field, `must be at most ${maxLength} characters`);
  assertText(field, value);
}

/** Rejects anything but a plain object whose keys are all in `allowed`. */
export function assertOptions<T>(
  field: string,
  value: T,
  allowed: readonly string[],
): asserts value is T & Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ValidationError(field, `must be an object, got ${describe(value)}`);
  }
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) {
      throw new ValidationError(field, `unknown option '${key}' (known: ${allowed.join(', ')})`);
    }
  }
}

/**
 * Serialises a payload to JSON as JSON.stringify does (an undefined object field is dropped,
 * an undefined array item becomes null), refusing what it would silently lose or change:
 * functions, symbols, BigInt, cycles, non-finite numbers, Maps, Sets and other class
 * instances without toJSON, nesting deeper than 1000 levels, and a value with no JSON at all.
 * Keys such as `__proto__` stay plain data.
 */
export function toJson(field: string, value: unknown, maxBytes: number): string {
  // The quick walk accepts the usual payload without building paths; anything it doubts
  // (a bad value, or nesting deep enough to hide a cycle) gets the walk that names the path.
  if (!isPlainJson(value, 0)) checkJsonValue(field, value, new Set(), 0);
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (err) {
    // a toJSON() that returns a BigInt or throws
    throw new ValidationError(field, `cannot be turned into JSON: ${messageOf(err)}`);
  }
  if (json === undefined) throw new ValidationError(field, 'has no JSON form (it is undefined, or its toJSON() returned undefined)');
  // A UTF-16 code unit is at most 3 UTF-8 bytes: count bytes only near the limit.
  if (json.length * 3 > maxBytes) {
    const bytes = Buffer.byteLength(json);
    if (bytes > maxBytes) throw new PayloadTooLargeError(field, bytes, maxBytes);
  }
  return json;
}

const QUICK_DEPTH = 32;

/** True when `value` is certainly plain JSON data (see checkJsonValue for the rules). */
function isPlainJson(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object':
      break;
    default:
      return false;
  }
  if (value === null) return true;
  if (depth >= QUICK_DEPTH) return false;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!isPlainJson(value[i], depth + 1)) return false;
    return true;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  for (const key of Object.keys(value)) {
    if (!isPlainJson((value as Record<string, unknown>)[key], depth + 1)) return false;
  }
  return true;
}

/** `undefined` is JSON.stringify's: dropped from objects, null in arrays, refused alone. */
function checkJsonValue(path: string, value: unknown, seen: Set<object>, depth: number, inside = false): void {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return;
    case 'number':
      if (!Number.isFinite(value)) throw new ValidationError(path, `is ${value}, which JSON cannot represent`);
      return;
    case 'undefined':
      if (inside) return;
      throw new ValidationError(path, 'is undefined, which JSON cannot represent (use null)');
    case 'bigint':
      throw new ValidationError(path, 'is a BigInt, which JSON cannot represent (convert it to a string)');
    case 'function':
    case 'symbol':
      throw new ValidationError(path, `is a ${typeof value}, which is not JSON data`);
  }
  if (value === null) return;
  if (depth >= MAX_JSON_DEPTH) throw new ValidationError(path, `is nested deeper than ${MAX_JSON_DEPTH} levels`);
  const obj = value as object;
  if (seen.has(obj)) throw new ValidationError(path, 'contains a cycle');
  if (typeof (obj as { toJSON?: unknown }).toJSON === 'function') return; // e.g. Date
  seen.add(obj);
  if (Array.isArray(obj)) {
    for (let i = 0; i < obj.length; i++) checkJsonValue(`${path}[${i}]`, obj[i], seen, depth + 1, true);
  } else {
    const proto = Object.getPrototypeOf(obj);
    if (proto !== Object.prototype && proto !== null) {
      const kind = (obj as { constructor?: { name?: string } }).constructor?.name ?? 'object';
      throw new ValidationError(path, `is a ${kind}, not plain JSON data (convert it to an object or array)`);
    }
    for (const key of Object.keys(obj)) {
      checkJsonValue(`${path}.${key}`, (obj as Record<string, unknown>)[key], seen, depth + 1, true);
    }
  }
  seen.delete(obj);
}

/** A value as error messages show it; never throws (BigInt, cyclic objects, a throwing toJSON). */
export function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'bigint') return `${value}n`;
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : String(value);
}

export function assertBoolean(field: string, value: unknown): asserts value is boolean {
  if (typeof value !== 'boolean') throw new ValidationError(field, `must be true or false, got ${describe(value)}`);
}

export function assertFunction(field: string, value: unknown): void {
  if (typeof value !== 'function') throw new ValidationError(field, `must be a function, got ${describe(value)}`);
}
