import type { FastifyInstance, FastifyRequest } from 'fastify';
import { rateLimitKey } from '../../api/rate-limit.js';
import type { Translator } from '../../i18n/translator.js';
import { donorViolations, moderationSettings, type DonorInput, type DonorViolation, type ModerationSettings } from '../../modules/moderation/moderation.service.js';
import { donorNameKey } from '../../modules/moderation/rules.js';

/** The donor page's answer to a form that passed its own checks: go on to payment, or not. */
export type GateResult =
  | { ok: true }
  /** A reject-mode rule: the form again with these errors (by form field), 422. */
  | { ok: false; errors: Record<string, string[]> }
  /** Over one of the streamer's rate limits: the form again, 429 with Retry-After. */
  | { ok: false; retryAfter: number; errors: Record<string, string[]> };

interface LimitCall {
  key: string;
  max: number;
  windowMs: number;
}

function violationText(t: Translator, v: DonorViolation, settings: ModerationSettings): string {
  if (v.rule === 'too_long') return t.t('moderation.donor.too_long', { max: settings.maxMessageLength ?? 0 });
  return t.t(v.rule === 'link' ? 'moderation.donor.link' : 'moderation.donor.banned_word', { field: v.field });
}

/**
 * The streamer's moderation at the donor form, before any money moves: reject-mode rules
 * (banned words, links, message length) refuse with a message in the donor's language, and the
 * streamer's per-IP and per-donor-name limits count each payment attempt that got this far. The
 * counters live in the app's rate-limit store (api/rate-limit.ts: memory on one node, Redis
 * shared by every node when REDIS_URL is set). If the store fails, the donor goes through: the
 * limit protects the streamer's stream, it must not take the page down.
 */
export function donorModerationGate(app: FastifyInstance): (request: FastifyRequest, t: Translator, userId: number, input: DonorInput) => Promise<GateResult> {
  // createRateLimit checks one request with fixed options; each call's key and limit ride along.
  const calls = new WeakMap<FastifyRequest, LimitCall>();
  const checker = app.createRateLimit({
    keyGenerator: (request: FastifyRequest) => calls.get(request)!.key,
    max: (request: FastifyRequest) => calls.get(request)!.max,
    timeWindow: (request: FastifyRequest) => calls.get(request)!.windowMs,
  });
  const count = async (request: FastifyRequest, call: LimitCall): Promise<number> => {
    calls.set(request, call);
    try {
      const limit = await checker(request);
      return !limit.isAllowed && limit.isExceeded ? Math.max(1, limit.ttlInSeconds) : 0;
    } catch (err) {
      request.log.warn({ err }, 'rate limit store unavailable; donor not throttled');
      return 0;
    } finally {
      calls.delete(request);
    }
  };

  return async (request, t, userId, input) => {
    const settings = await moderationSettings(app.ctx.db, userId);
    if (!settings) return { ok: true };
    const broken = donorViolations(settings, input);
    if (broken.length) {
      const errors: Record<string, string[]> = {};
      for (const v of broken) (errors[v.field] ??= []).push(violationText(t, v, settings));
      return { ok: false, errors };
    }
    const windowMs = settings.rateWindowSeconds * 1000;
    let retryAfter = 0;
    if (settings.ipRateLimit !== null) {
      retryAfter = await count(request, { key: `donor-page:${userId}:${await rateLimitKey(request)}`, max: settings.ipRateLimit, windowMs });
    }
    const donor = donorNameKey(input.username);
    if (!retryAfter && settings.donorRateLimit !== null && donor !== '') {
      retryAfter = await count(request, { key: `donor-page:${userId}:name:${donor}`, max: settings.donorRateLimit, windowMs });
    }
    if (retryAfter) return { ok: false, retryAfter, errors: { form: [t.t('moderation.donor.rate_limited', { seconds: retryAfter })] } };
    return { ok: true };
  };
}
