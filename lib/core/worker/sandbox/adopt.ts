/**
 * A value cloned from a child, rebuilt with this realm's prototypes. Clones arrive with the
 * prototypes of Node's main realm, which a vm context (Jest runs tests in one) does not
 * share: there a cloned object would not count as plain JSON data. Plain objects, arrays and
 * Dates are rebuilt; anything else stays as it came.
 */
export function adopt(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object' || depth > 1000) return value;
  if (Array.isArray(value)) return value.map((v) => adopt(v, depth + 1));
  const tag = Object.prototype.toString.call(value);
  if (tag === '[object Date]') return new Date((value as Date).getTime());
  const proto = Object.getPrototypeOf(value) as object | null;
  if (tag !== '[object Object]' || (proto !== null && Object.getPrototypeOf(proto) !== null)) return value;
  const copy: Record<string, unknown> = proto === null ? Object.create(null) : {};
  for (const key of Object.keys(value)) copy[key] = adopt((value as Record<string, unknown>)[key], depth + 1);
  return copy;
}
