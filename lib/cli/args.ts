import { InvalidArgumentError } from 'commander';

/** A commander parser for a whole number in [min, max]: a bad value is a usage error (exit 2). */
export function intArg(min: number, max = Number.MAX_SAFE_INTEGER): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^-?\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min || n > max) {
      throw new InvalidArgumentError(`expected a whole number from ${min} to ${max}, got '${value}'`);
    }
    return n;
  };
}
