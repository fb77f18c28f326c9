import { createHash } from 'node:crypto';
import type { Dialect } from '../../src/db/database.js';
import type { StreamerProviderId } from '../../src/domain/payment-providers.js';
import type { UserRow } from '../../src/modules/accounts/accounts.table.js';
import { savePaymentSetting } from '../../src/modules/payments/payment-settings.service.js';
import type { StripeApiEndpoint } from '../../src/modules/payments/stripe.js';
import { buildTestApp, makeUser, type TestApp } from '../helper.js';

export const STRIPE_WEBHOOK_SECRET = 'whsec_test_openalerts_standin_secret';
export const PAYMENTS_ENV = {
  PAYMENT_PROVIDERS: 'stripe,yoomoney,kofi,signed',
  STRIPE_SECRET_KEY: 'sk_test_openalerts_standin',
  STRIPE_WEBHOOK_SECRET,
};

/** The app with every provider enabled on the instance (the Stripe client pointed at `stripeApi` when given). */
export function paymentsApp(opts: { dialect?: Dialect; env?: Record<string, string>; stripeApi?: StripeApiEndpoint } = {}): Promise<TestApp> {
  return buildTestApp({ dialect: opts.dialect, env: { ...PAYMENTS_ENV, ...opts.env }, overrides: opts.stripeApi ? { stripeApi: opts.stripeApi } : {} });
}

export const YOOMONEY_SECRET = 'Yoo+Money/Secret==test';
export const KOFI_TOKEN = '3f1c2b0a-9d8e-4f7a-b6c5-d4e3f2a1b0c9';

/** A streamer with the given providers turned on and their credentials saved. */
export async function streamerWith(t: TestApp, providers: StreamerProviderId[], overrides: Parameters<typeof makeUser>[1] = {}): Promise<{ user: UserRow; signingSecret: string }> {
  const user = await makeUser(t.database.db, { currency: 'RUB', ...overrides });
  const key = t.app.ctx.secrets.encryptionKey;
  let signingSecret = '';
  for (const provider of providers) {
    const credentials: Record<string, string> = provider === 'yoomoney' ? { wallet: '410011234567890', notification_secret: YOOMONEY_SECRET }
      : provider === 'kofi' ? { verification_token: KOFI_TOKEN, page_url: 'https://ko-fi.com/teststreamer' } : {};
    const saved = await savePaymentSetting(t.database.db, key, user.id, provider, { enabled: true, credentials });
    if (provider === 'signed') signingSecret = saved.credentials.secret!;
  }
  return { user, signingSecret };
}

/** A YooMoney notification form body, signed per YooMoney's sha1_hash rule unless `hash` is given. */
export function yoomoneyBody(fields: Record<string, string>, secret = YOOMONEY_SECRET, hash?: string): string {
  const all: Record<string, string> = {
    notification_type: 'card-incoming', operation_id: `op-${Math.random().toString(36).slice(2)}`, amount: '98.00', withdraw_amount: '100.00', currency: '643',
    datetime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), sender: '', codepro: 'false', label: '', ...fields,
  };
  const signed = ['notification_type', 'operation_id', 'amount', 'currency', 'datetime', 'sender', 'codepro'].map((k) => all[k]).join('&') + `&${secret}&${all.label}`;
  all.sha1_hash = hash ?? createHash('sha1').update(signed, 'utf8').digest('hex');
  return new URLSearchParams(all).toString();
}

/** A Ko-fi webhook form body: the payment as JSON in the `data` field. */
export function kofiBody(payment: Record<string, unknown>): string {
  const data = {
    verification_token: KOFI_TOKEN, message_id: `msg-${Math.random().toString(36).slice(2)}`, timestamp: new Date().toISOString(), type: 'Donation', is_public: true,
    from_name: 'Jo Example', message: 'Good luck with the stream!', amount: '3.00', url: 'https://ko-fi.com/Home/CoffeeShop?txid=0000', email: 'jo@example.test', currency: 'USD',
    is_subscription_payment: false, is_first_subscription_payment: false, kofi_transaction_id: `tx-${Math.random().toString(36).slice(2)}`, shop_items: null, tier_name: null, shipping: null,
    ...payment,
  };
  return new URLSearchParams({ data: JSON.stringify(data) }).toString();
}

export async function donationsOf(t: TestApp, userId: number) {
  return t.database.db.selectFrom('donations').selectAll().where('user_id', '=', userId).orderBy('id').execute();
}

export const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
