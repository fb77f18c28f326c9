import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { AmountError, toMinor } from '../../domain/money.js';
import { safeEqual } from '../../security/crypto.js';
import type { CheckoutPaymentProvider } from '../donations/payment-provider.js';
import { formFields, logRefusal, outcomeReply } from './notifications.js';
import { streamerPaymentSetting } from './payment-settings.service.js';
import { recordProviderPayment } from './payments.service.js';

/**
 * YooMoney wallet payments: the donor page posts the quickpay form to YooMoney with the pending
 * donation's reference as `label`; YooMoney sends an HTTP notification to the streamer's
 * notification URL (/payments/yoomoney/<streamer id>), signed with the streamer's notification
 * secret. YooMoney wallets take roubles only (ISO 4217 code 643).
 */
export const YOOMONEY_LABEL = 'YooMoney';
export const QUICKPAY_URL = 'https://yoomoney.ru/quickpay/confirm';
const RUB_CODE = '643';

export const yoomoneyProvider: CheckoutPaymentProvider = {
  id: 'yoomoney',
  kind: 'checkout',
  label: YOOMONEY_LABEL,
  description: 'You pay in roubles on YooMoney (card or YooMoney wallet); the alert appears once YooMoney confirms the transfer.',
  isTest: false,
  currencies: ['RUB'],
  async beginCheckout({ streamer, pending, credentials, returnUrl }) {
    return {
      kind: 'form',
      action: QUICKPAY_URL,
      fields: {
        receiver: credentials.wallet ?? '',
        'quickpay-form': 'button',
        paymentType: 'AC',
        sum: (pending.amount / 100).toFixed(2),
        label: pending.ref,
        targets: `Donation to ${streamer.name}`,
        successURL: returnUrl,
      },
    };
  },
};

/**
 * YooMoney's documented check: sha1 (hex) of
 * notification_type&operation_id&amount&currency&datetime&sender&codepro&notification_secret&label,
 * each value exactly as received (an absent one as the empty string).
 */
export function yoomoneyHash(fields: URLSearchParams, secret: string): string {
  const parts = ['notification_type', 'operation_id', 'amount', 'currency', 'datetime', 'sender', 'codepro'].map((name) => fields.get(name) ?? '');
  return createHash('sha1').update([...parts, secret, fields.get('label') ?? ''].join('&'), 'utf8').digest('hex');
}

function minor(value: string | null): number | null {
  if (value === null) return null;
  try {
    return toMinor(value);
  } catch (err) {
    if (err instanceof AmountError) return null;
    throw err;
  }
}

export async function yoomoneyNotificationRoutes(app: FastifyInstance): Promise<void> {
  app.post<{ Params: { userId: string } }>('/payments/yoomoney/:userId', async (request, reply) => {
    const userId = /^[1-9]\d{0,14}$/.test(request.params.userId) ? Number(request.params.userId) : 0;
    const fields = formFields(request);
    const paymentId = fields.get('operation_id');
    const setting = userId ? await streamerPaymentSetting(app.ctx.db, app.ctx.secrets.encryptionKey, userId, 'yoomoney') : null;
    const secret = setting?.credentials.notification_secret;
    if (!setting?.enabled || !secret) {
      logRefusal(request, 'yoomoney', paymentId, 'YooMoney is not on for this streamer');
      return reply.status(404).send({ message: 'This streamer does not take YooMoney payments here; check the notification URL in YooMoney’s settings.' });
    }
    if (!safeEqual(fields.get('sha1_hash') ?? '', yoomoneyHash(fields, secret))) {
      logRefusal(request, 'yoomoney', paymentId, 'bad sha1_hash');
      return reply.status(403).send({ message: 'Invalid signature: sha1_hash does not match; check the notification secret saved in the dashboard.' });
    }
    // The "Test" button of YooMoney's settings page: verified, nothing to record.
    if (fields.get('test_notification') === 'true') return reply.send({ received: true, test: true });
    if (!paymentId) {
      logRefusal(request, 'yoomoney', null, 'no operation_id');
      return reply.status(400).send({ message: 'The notification has no operation_id.' });
    }
    // Protected (codepro) or not yet accepted transfers are not in the wallet yet: not money received.
    if (fields.get('codepro') === 'true' || fields.get('unaccepted') === 'true') {
      logRefusal(request, 'yoomoney', paymentId, 'transfer not received yet (codepro or unaccepted)');
      return reply.send({ received: true, ignored: 'The transfer is not received yet.' });
    }
    const label = fields.get('label') ?? '';
    if (!label) {
      logRefusal(request, 'yoomoney', paymentId, 'no label: not a donor-page payment');
      return reply.send({ received: true, ignored: 'Not a donation from the donor page.' });
    }
    // withdraw_amount is what the donor paid (the quickpay `sum`); amount is what reached the
    // wallet after YooMoney's fee. The donor's amount is the donation.
    const paid = minor(fields.get('withdraw_amount')) ?? minor(fields.get('amount'));
    if (paid === null) {
      logRefusal(request, 'yoomoney', paymentId, 'unreadable amount');
      return reply.status(400).send({ message: 'The notification has no readable withdraw_amount or amount.' });
    }
    const currency = fields.get('currency') === RUB_CODE ? 'RUB' : `ISO 4217 ${fields.get('currency') ?? '?'}`;
    const outcome = await recordProviderPayment(app.ctx.db, {
      provider: 'yoomoney', paymentId, pendingRef: label, userId, amount: paid, currency, payinSystem: YOOMONEY_LABEL,
    });
    return outcomeReply(request, reply, 'yoomoney', paymentId, outcome);
  });
}
