/*
 * Errors across the boundary of a sandbox: a class cannot cross it, so an Error crosses as
 * its name, message, stack, own fields and cause, and is rebuilt on the other side. relq's
 * errors whose class the worker acts on are rebuilt as that class (by their stable `code`):
 * an UnrecoverableError thrown in a child dead-letters its job at once, a RateLimitError
 * holds back the queue, as in-process.
 */
import { RateLimitError, UnrecoverableError } from '../../errors.js';
import type { PackedThrown } from './messages.js';

/**
 * Anything thrown, as a cloneable value; never throws. Runs in the child too (its source is
 * sent there as text, child-source.ts), so it refers to nothing outside itself.
 */
export function packThrown(value: unknown, depth = 0): PackedThrown {
  const text = (v: unknown, fallback: string): string => {
    try {
      return typeof v === 'string' ? v : String(v);
    } catch {
      return fallback;
    }
  };
  try {
    if (!(value instanceof Error)) {
      try {
        return { value: structuredClone(value) };
      } catch {
        return { value: text(value, 'an uncloneable value') };
      }
    }
    const props: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      if (key === 'name' || key === 'message' || key === 'stack' || key === 'cause') continue;
      try {
        props[key] = structuredClone((value as unknown as Record<string, unknown>)[key]);
      } catch {
        // a field that does not clone stays behind
      }
    }
    const stack = (value as { stack?: unknown }).stack;
    const error: Extract<PackedThrown, { error: unknown }>['error'] = {
      name: text(value.name, 'Error'),
      message: text(value.message, ''),
      stack: typeof stack === 'string' ? stack : undefined,
      props,
    };
    const cause = (value as { cause?: unknown }).cause;
    if (cause !== undefined && depth < 8) error.cause = packThrown(cause, depth + 1);
    return { error };
  } catch {
    return { value: 'an unreadable thrown value' };
  }
}

/**
 * A packed Error rebuilt as a plain Error (its name, message, stack, fields and cause), or the
 * packed value. Runs in the child too: refers to nothing outside itself.
 */
export function revivePlain(packed: PackedThrown, make?: (e: Extract<PackedThrown, { error: unknown }>['error']) => Error): unknown {
  if (!('error' in packed)) return packed.value;
  const e = packed.error;
  const error = make?.(e) ?? new Error(e.message);
  for (const [key, v] of Object.entries(e.props)) {
    try {
      (error as unknown as Record<string, unknown>)[key] = v;
    } catch {
      // a readonly field of the rebuilt class keeps its own value
    }
  }
  Object.defineProperty(error, 'name', { value: e.name, writable: true, configurable: true });
  Object.defineProperty(error, 'stack', { value: e.stack, writable: true, configurable: true });
  if (e.cause) Object.defineProperty(error, 'cause', { value: revivePlain(e.cause, make), writable: true, configurable: true });
  return error;
}

/** What a child threw, on the worker's side: relq's UnrecoverableError and RateLimitError as their classes. */
export function reviveThrown(packed: PackedThrown): unknown {
  return revivePlain(packed, (e) => {
    const p = e.props;
    if (p.code === 'RELQ_UNRECOVERABLE') return new UnrecoverableError(e.message);
    if (p.code === 'RELQ_RATE_LIMITED' && typeof p.delayMs === 'number') {
      return new RateLimitError(p.delayMs, { scope: p.scope === 'queue' ? 'queue' : 'auto', message: e.message });
    }
    return new Error(e.message);
  });
}
