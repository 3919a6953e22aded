/** What the model-based tests (model.spec.ts, flow-model.spec.ts) throw when the real queue and the model differ. */
export class ModelMismatch extends Error {
  override name = 'ModelMismatch';
}

/** `expect(actual).toEqual(expected)`, failing as a ModelMismatch that names `what`. */
export function same(actual: unknown, expected: unknown, what: string): void {
  try {
    expect(actual).toEqual(expected);
  } catch (err) {
    throw new ModelMismatch(`${what}\n${(err as Error).message}`);
  }
}
