/**
 * The keys an options object may have, listed as a record of the options interface so that
 * the compiler asks for every key it declares (an engine option added to an interface that
 * extends the engine's is then accepted by the unknown-key check too). In the order given,
 * which is the order the "known: ..." of an error lists them.
 */
export function optionKeys<T>(keys: { readonly [K in keyof Required<T>]: true }): string[] {
  return Object.keys(keys);
}
