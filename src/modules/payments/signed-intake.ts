import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { documentationOnly, MessageBody, ValidationErrorBody } from '../../api/schemas.js';
import { INPUT_CURRENCIES, isInputCurrency } from '../../domain/currency.js';
import { addFieldMessage, msg, NotFoundError, ValidationError, type FieldMessages } from '../../domain/errors.js';
import { AmountError, amountMessage, toMinor } from '../../domain/money.js';
import { parseJson, UnparsableInput } from '../../http/body-parsers.js';
import { sha256Hex } from '../../security/crypto.js';
import { TIMESTAMP_TOLERANCE_SECONDS, verifyWebhook } from '../../security/standard-webhooks.js';
import { userById } from '../accounts/accounts.service.js';
import { toDonationResource } from '../donations/donations.resource.js';
import { DonationResourceSchema } from '../donations/donations.schemas.js';
import { DONATION_LIMITS, donationOf } from '../donations/donations.service.js';
import { keepRawBodies, logRefusal, rawBody } from './notifications.js';
import { streamerPaymentSetting } from './payment-settings.service.js';
import { recordProviderPayment } from './payments.service.js';

/**
 * The signed intake (an OpenAlerts extension of the API): any other payment processor, shop or
 * bot reports a paid donation to a streamer, signed per Standard Webhooks with the streamer's own
 * `whsec_` secret (dashboard → Payments). Idempotent on the `Idempotency-Key` header, else on
 * `webhook-id`: a retry with the same key and body answers 200 with the donation recorded the
 * first time; the same key with another body is refused.
 */
export const SIGNED_LABEL = 'Signed intake';

const DESCRIPTION = `**OpenAlerts extension** (not in the original API). Records a donation another payment processor or bot has taken, for the streamer \`user_id\`. The streamer turns the signed intake on under Dashboard → Payments and copies its \`whsec_…\` secret from there.

**Signature** ([Standard Webhooks](https://www.standardwebhooks.com/)): send \`webhook-id\` (unique per donation), \`webhook-timestamp\` (unix seconds; refused when more than 5 minutes from now) and \`webhook-signature: v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<raw body>">\`, keyed with the base64-decoded part of the secret after \`whsec_\`. No bearer token.

**Idempotency**: the \`Idempotency-Key\` header, or \`webhook-id\` without it. A retry with the same key and the same body answers \`200\` with the donation of the first delivery; the same key with another body is a \`400\` on \`idempotency_key\`.

The donation is published, alerts, and counts toward goals like any other.`;

const IntakeBody = Type.Object({
  amount: Type.Union([Type.Number(), Type.String()], { description: 'Major units, at most two decimals, e.g. `5` or `"12.50"`.' }),
  currency: Type.String({ enum: [...INPUT_CURRENCIES] }),
  username: Type.Optional(Type.String({ maxLength: DONATION_LIMITS.username, description: 'Donor name; `Anonymous` when empty.' })),
  message: Type.Optional(Type.String({ maxLength: DONATION_LIMITS.message })),
  payin_system: Type.Optional(Type.String({ maxLength: 64, description: 'Shown as `payin_system.title`; `Signed intake` when absent.' })),
});

/** Marks an operation as ours, not the original API's (an OpenAPI specification extension). */
const OPENALERTS_EXTENSION: Record<string, unknown> = { 'x-openalerts-extension': true };

const KEY = /^[\x21-\x7e]{1,255}$/;

function readBody(text: string): { amount: number; currency: string; username: string; message: string; payinSystem: string } {
  const parsed = parseJson(text);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new UnparsableInput('body', msg('err.body.json_object'));
  const body = parsed as Record<string, unknown>;
  const errors: FieldMessages = {};
  let amount = 0;
  try {
    amount = typeof body.amount === 'number' || typeof body.amount === 'string' ? toMinor(body.amount) : toMinor('');
    if (amount <= 0) errors.amount = [msg('err.amount.positive', { label: 'amount' })];
  } catch (err) {
    if (!(err instanceof AmountError)) throw err;
    errors.amount = [amountMessage('amount', err.problem)];
  }
  if (!isInputCurrency(body.currency)) errors.currency = [msg('err.currency.one_of', { list: INPUT_CURRENCIES.join(', ') })];
  const optional = (name: string, max: number): string => {
    const value = body[name];
    if (value === undefined || value === null) return '';
    if (typeof value !== 'string') addFieldMessage(errors, name, msg('err.field.string_short', { label: name }));
    else if (value.length > max) addFieldMessage(errors, name, msg('err.field.max_chars_short', { label: name, max }));
    return typeof value === 'string' ? value : '';
  };
  const username = optional('username', DONATION_LIMITS.username);
  const message = optional('message', DONATION_LIMITS.message);
  const payinSystem = optional('payin_system', 64).trim();
  if (Object.keys(errors).length) throw new ValidationError(errors);
  return { amount, currency: body.currency as string, username, message, payinSystem: payinSystem || SIGNED_LABEL };
}

/** Why a request's Standard Webhooks signature is refused, in words for the sender; null when it verifies. */
function signatureRefusal(secret: string, headers: IncomingHttpHeaders, body: string): string | null {
  const missing = ['webhook-id', 'webhook-timestamp', 'webhook-signature'].filter((name) => typeof headers[name] !== 'string' || headers[name] === '');
  if (missing.length) return `Send the Standard Webhooks headers ${missing.join(', ')}.`;
  const timestamp = Number(headers['webhook-timestamp']);
  if (!Number.isSafeInteger(timestamp) || Math.abs(Date.now() / 1000 - timestamp) > TIMESTAMP_TOLERANCE_SECONDS) {
    return 'The webhook-timestamp is more than 5 minutes away from now; sign each delivery when you send it (unix seconds, a synchronised clock).';
  }
  if (!verifyWebhook(secret, headers, body)) {
    return 'The webhook-signature does not match; sign "<webhook-id>.<webhook-timestamp>.<body>" with HMAC-SHA256 and the streamer’s whsec_ secret.';
  }
  return null;
}

export async function signedIntakeRoutes(app: FastifyInstance): Promise<void> {
  keepRawBodies(app);
  app.post<{ Params: { user_id: string } }>(
    '/payments/:user_id/donations',
    {
      ...documentationOnly,
      schema: {
        summary: 'Record a donation paid elsewhere (signed intake)',
        description: DESCRIPTION,
        tags: ['Payments'],
        security: [{ standardWebhooks: [] }],
        ...OPENALERTS_EXTENSION,
        params: Type.Object({ user_id: Type.Integer({ description: 'The streamer’s user id (shown on their Payments page).' }) }),
        headers: Type.Object({
          'webhook-id': Type.String(),
          'webhook-timestamp': Type.String(),
          'webhook-signature': Type.String(),
          'idempotency-key': Type.Optional(Type.String({ description: 'Replaces `webhook-id` as the idempotency key.' })),
        }),
        body: IntakeBody,
        consumes: ['application/json'],
        response: {
          201: Type.Object({ data: DonationResourceSchema }, { description: 'Recorded.' }),
          200: Type.Object({ data: DonationResourceSchema }, { description: 'A retry: the donation recorded for this key before.' }),
          400: { ...ValidationErrorBody, description: 'Validation failed, or the key was used before with another body.' },
          403: { ...MessageBody, description: 'Missing or wrong signature, or a timestamp more than 5 minutes away.' },
          404: { ...MessageBody, description: 'No such streamer, or the signed intake is off for them.' },
          413: { ...MessageBody, description: 'The body is over the size limit.' },
          429: { ...MessageBody, description: '`{"message":"Too Many Attempts."}` with `Retry-After` (seconds) and `X-RateLimit-Reset` (unix time).' },
          500: { ...MessageBody, description: '`{"message":"Server Error."}`.' },
        },
      },
    },
    async (request, reply) => {
      const userId = /^[1-9]\d{0,14}$/.test(request.params.user_id) ? Number(request.params.user_id) : 0;
      const streamer = userId ? await userById(app.ctx.db, userId) : undefined;
      const setting = streamer?.is_active ? await streamerPaymentSetting(app.ctx.db, app.ctx.secrets.encryptionKey, userId, 'signed') : null;
      const headerKey = request.headers['idempotency-key'];
      const webhookId = request.headers['webhook-id'];
      const key = typeof headerKey === 'string' ? headerKey : typeof webhookId === 'string' ? webhookId : '';
      if (!app.ctx.payments.instanceEnables('signed') || !streamer || !setting?.enabled || !setting.credentials.secret) {
        throw new NotFoundError(msg('err.signed.off'));
      }
      const body = rawBody(request);
      const refusal = signatureRefusal(setting.credentials.secret, request.headers, body);
      if (refusal) {
        logRefusal(request, 'signed', key || null, refusal);
        return reply.status(403).send({ message: refusal });
      }
      if (!KEY.test(key)) throw ValidationError.field('idempotency_key', msg('err.signed.key_format'));
      const input = readBody(body);
      const fingerprint = sha256Hex(body);
      const outcome = await recordProviderPayment(app.ctx.db, {
        provider: 'signed', paymentId: `${userId}:${key}`, userId, fingerprint, ...input,
      });
      if (outcome.status === 'recorded') return reply.status(201).send({ data: outcome.donation });
      if (outcome.status === 'duplicate' && outcome.fingerprint === fingerprint && outcome.donationId !== null) {
        const row = await donationOf(app.ctx.db, userId, outcome.donationId);
        if (row) return reply.status(200).send({ data: toDonationResource(row, streamer.name) });
      }
      logRefusal(request, 'signed', key, 'idempotency key reused with another body');
      throw ValidationError.field('idempotency_key', msg('err.signed.key_reused'));
    },
  );
}
