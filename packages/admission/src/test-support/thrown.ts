/** The error `fn` throws, which must be a `type`: anything else thrown is rethrown, and throwing nothing fails the test. */
export function thrown<E extends Error>(type: abstract new (...args: never[]) => E, fn: () => unknown): E {
  try {
    fn();
  } catch (err) {
    if (err instanceof type) return err;
    throw err;
  }
  throw new Error(`expected a ${type.name}`);
}
