/**
 * Polls `check` until it returns something truthy, and returns that; fails after `ms` with `what`
 * in the message. The one wait helper of the suite, for conditions that have no event to await.
 */
export async function until<T>(check: () => T | Promise<T>, ms = 3000, what = 'condition'): Promise<NonNullable<T>> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
