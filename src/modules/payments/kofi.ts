import type { FastifyInstance } from 'fastify';
import { isInputCurrency } from '../../domain/currency.js';
import { msg } from '../../domain/errors.js';
import { AmountError, toMinor } from '../../domain/money.js';
import { UnparsableInput, parseJson } from '../../http/body-parsers.js';
import { safeEqual } from '../../security/crypto.js';
import { DONATION_LIMITS } from '../donations/donations.service.js';
import { formFields, logRefusal, outcomeReply } from './notifications.js';
import { streamerPaymentSetting } from './payment-settings.service.js';
import { recordProviderPayment } from './payments.service.js';

/**
 * Ko-fi webhooks: donors pay on the streamer's Ko-fi page; Ko-fi posts each payment to the
 * streamer's webhook URL (/payments/kofi/<streamer id>) as a form field `data` holding JSON with
 * the streamer's verification token. Donations, shop orders and subscription payments become
 * donations; commissions do not (they are work ordered, not support shown on stream).
 */
export const KOFI_LABEL = 'Ko-fi';
const RECORDED_TYPES = new Set(['Donation', 'Shop Order', 'Subscription']);

interface KofiPayment {
  verification_token?: unknown;
  message_id?: unknown;
  kofi_transaction_id?: unknown;
  type?: unknown;
  is_public?: unknown;
  from_name?: unknown;
  message?: unknown;
  amount?: unknown;
  currency?: unknown;
}

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

export async function kofiWebhookRoutes(app: FastifyInstance): Promise<void> {
  app.post<{ Params: { userId: string } }>('/payments/kofi/:userId', async (request, reply) => {
    const userId = /^[1-9]\d{0,14}$/.test(request.params.userId) ? Number(request.params.userId) : 0;
    const data = formFields(request).get('data');
    if (data === null) throw new UnparsableInput('body', msg('err.kofi.data_missing'));
    const parsed = parseJson(data);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new UnparsableInput('body', msg('err.kofi.data_object'));
    const payment = parsed as KofiPayment;
    const paymentId = text(payment.kofi_transaction_id) || text(payment.message_id);
    const setting = userId ? await streamerPaymentSetting(app.ctx.db, app.ctx.secrets.encryptionKey, userId, 'kofi') : null;
    const token = setting?.credentials.verification_token;
    if (!setting?.enabled || !token) {
      logRefusal(request, 'kofi', paymentId || null, 'Ko-fi is not on for this streamer');
      return reply.status(404).send({ message: 'This streamer does not take Ko-fi payments here; check the webhook URL in Ko-fi’s settings.' });
    }
    if (!safeEqual(text(payment.verification_token), token)) {
      logRefusal(request, 'kofi', paymentId || null, 'bad verification_token');
      return reply.status(403).send({ message: 'Invalid verification token; copy it again from Ko-fi (Settings → Webhooks → Advanced) into the dashboard.' });
    }
    if (!paymentId) {
      logRefusal(request, 'kofi', null, 'no kofi_transaction_id or message_id');
      return reply.status(400).send({ message: 'The payment has no kofi_transaction_id or message_id.' });
    }
    const type = text(payment.type);
    if (!RECORDED_TYPES.has(type)) {
      request.log.info({ provider: 'kofi', paymentId, type }, 'Ko-fi payment type not recorded as a donation');
      return reply.send({ received: true, ignored: `A ${type || 'payment'} is not recorded as a donation.` });
    }
    const currency = text(payment.currency).toUpperCase();
    let amount: number;
    try {
      amount = toMinor(text(payment.amount));
    } catch (err) {
      if (!(err instanceof AmountError)) throw err;
      logRefusal(request, 'kofi', paymentId, 'unreadable amount');
      return reply.status(400).send({ message: `The amount ${err.message}` });
    }
    if (!isInputCurrency(currency) || amount <= 0) {
      // Real money, but in a currency donations cannot hold: acknowledged (a retry cannot help) and logged.
      logRefusal(request, 'kofi', paymentId, `currency ${currency || '?'} or amount not accepted for donations`);
      return reply.send({ received: true, ignored: `Donations are recorded in EUR, USD, RUB, BRL or TRY only, not ${currency || 'this currency'}.` });
    }
    // A private Ko-fi message stays private: the stream shows the name and the amount only.
    const message = payment.is_public === false ? '' : text(payment.message).slice(0, DONATION_LIMITS.message);
    const outcome = await recordProviderPayment(app.ctx.db, {
      provider: 'kofi', paymentId, userId, amount, currency, payinSystem: KOFI_LABEL,
      username: [...text(payment.from_name).trim()].slice(0, DONATION_LIMITS.username).join(''),
      message,
    });
    return outcomeReply(request, reply, 'kofi', paymentId, outcome);
  });
}
