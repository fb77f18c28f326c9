import type { FastifyInstance, FastifyRequest } from 'fastify';
import { LOGIN_FAILURE_WINDOW_MS, loginRetryDelayMs, normalizeEmail } from '../modules/accounts/accounts.service.js';
import { sha256Hex } from '../security/crypto.js';

export interface LoginBackoff {
  /**
   * Before a password is checked: null when this attempt may go ahead, else the seconds to wait.
   * An attempt takes the account's one slot per delay; taking it is atomic in the counter store,
   * so parallel attempts (on any node) cannot share one.
   */
  admit(request: FastifyRequest, email: string): Promise<number | null>;
  /** After a failed log-in for `email` (wrong password, unknown or disabled account alike). */
  failed(request: FastifyRequest, email: string): Promise<void>;
}

/** Large enough never to be reached: the failure counter only counts, the gate decides. */
const COUNT_ONLY = 1_000_000;

/**
 * The per-account backoff of accounts.service.ts on the rate-limit counter store (rate-limit.ts):
 * in memory on one node, in Redis across nodes. Two counters per account, keyed by a hash of the
 * e-mail: its recent failures, and a gate that lets one attempt through per retry delay. If the
 * store fails, attempts go ahead (the per-IP limit still applies): the backoff protects accounts,
 * it must not block every log-in.
 */
export function loginBackoff(app: FastifyInstance): LoginBackoff {
  const account = new WeakMap<FastifyRequest, { key: string; delay: number }>();
  const keyOf = (request: FastifyRequest) => account.get(request)!.key;
  const failures = app.createRateLimit({
    max: COUNT_ONLY,
    timeWindow: LOGIN_FAILURE_WINDOW_MS,
    keyGenerator: (request) => `login-failures:${keyOf(request)}`,
  });
  const gate = app.createRateLimit({
    max: 1,
    timeWindow: (request) => account.get(request)!.delay,
    keyGenerator: (request) => `login-gate:${keyOf(request)}`,
  });

  return {
    async admit(request, email) {
      account.set(request, { key: sha256Hex(normalizeEmail(email)), delay: 0 });
      try {
        const seen = await failures(request, { increment: false });
        const delay = seen.isAllowed ? 0 : loginRetryDelayMs(COUNT_ONLY - seen.remaining);
        if (delay === 0) return null;
        account.set(request, { key: keyOf(request), delay });
        const slot = await gate(request);
        return !slot.isAllowed && slot.isExceeded ? Math.max(1, slot.ttlInSeconds) : null;
      } catch (err) {
        request.log.warn({ err }, 'log-in backoff store unavailable; attempt not delayed');
        return null;
      }
    },
    async failed(request, email) {
      account.set(request, { key: sha256Hex(normalizeEmail(email)), delay: 0 });
      try {
        const counted = await failures(request);
        const delay = counted.isAllowed ? 0 : loginRetryDelayMs(COUNT_ONLY - counted.remaining);
        if (delay === 0) return;
        // The wait runs from this failure: the attempt after the last free one already waits.
        account.set(request, { key: keyOf(request), delay });
        await gate(request);
      } catch (err) {
        request.log.warn({ err }, 'log-in backoff store unavailable; failure not counted');
      }
    },
  };
}
