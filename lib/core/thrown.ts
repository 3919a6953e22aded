/*
 * Whatever user code throws or returns can throw again when read: an Error whose `message`
 * getter throws, a revoked Proxy (even `instanceof` throws on it), a Symbol in a template
 * literal, a `toString` that throws. Every place relq turns such a value into text, or asks
 * what kind of error it is, goes through here, so that reading it never throws.
 */
import { UnreadableValueError } from './errors.js';

/** What an unreadable value is called in messages. */
function kindOf(value: unknown): string {
  const type = typeof value;
  return type === 'object' || type === 'function' ? `${type} that threw when read (a revoked Proxy, or a throwing getter or toString)` : type;
}

/** Any value as text: JSON where it has some, else String(), else its tag. May throw. */
function plainText(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    const json = JSON.stringify(value);
    if (json !== undefined) return json;
  } catch {
    // cyclic, a BigInt, or a getter that throws
  }
  try {
    return String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

/**
 * Anything thrown, as one line of text, never throwing: `Name: message` for an Error, the
 * string itself, else JSON / String() / the value's tag; `undefined` is 'failed'.
 */
export function describeThrown(value: unknown): string {
  try {
    if (value instanceof Error) {
      const name = plainText(value.name);
      const message = plainText(value.message);
      return message ? `${name}: ${message}` : name;
    }
    if (value === undefined) return 'failed';
    return plainText(value);
  } catch {
    return `an unreadable ${kindOf(value)}`;
  }
}

/** An Error's message, or any other thrown value as describeThrown() gives it; never throws. */
export function messageOf(value: unknown): string {
  try {
    if (value instanceof Error) return plainText(value.message);
  } catch {
    // described below
  }
  return describeThrown(value);
}

/**
 * What a handler threw (or gave as a failure), safe for relq to keep, classify and report:
 * the value itself when an `instanceof` check and reading its name and message as text
 * work, else an UnreadableValueError describing it.
 */
export function readableThrown(value: unknown): unknown {
  try {
    if (value instanceof Error) {
      void `${plainText(value.name)}${plainText(value.message)}`;
    } else if ((typeof value === 'object' && value !== null) || typeof value === 'function') {
      void Object.prototype.toString.call(value); // a revoked Proxy throws here
    }
    return value;
  } catch {
    return new UnreadableValueError(`a handler threw an unreadable ${kindOf(value)}`);
  }
}

/** An Error's stack, for a log line; undefined for anything else, or where reading it throws. */
export function stackOf(value: unknown): string | undefined {
  try {
    return value instanceof Error && typeof value.stack === 'string' ? value.stack : undefined;
  } catch {
    return undefined;
  }
}

/** `value instanceof type`, false where the check itself throws (a revoked Proxy). */
export function isInstance<T>(value: unknown, type: abstract new (...args: never[]) => T): value is T {
  try {
    return value instanceof type;
  } catch {
    return false;
  }
}
