import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ValidationError } from '../../../domain/errors.js';
import { isStreamerProvider, STREAMER_PROVIDERS, type StreamerProviderId } from '../../../domain/payment-providers.js';
import { rotateSigningSecret, savePaymentSetting, streamerPaymentSettings, type StreamerSettings } from '../../../modules/payments/payment-settings.service.js';
import type { Translator } from '../../../i18n/translator.js';
import { redirectWithFlash, takeFlash } from '../../flash.js';
import { html, type Html } from '../../html.js';
import { pageTranslator } from '../../i18n.js';
import { fieldErrors } from '../../layout.js';
import { csrfField, field, notice, sendPage, type FieldErrors } from './common.js';
import { fieldErrorTexts } from '../../error-text.js';

const NAMES: Record<StreamerProviderId, string> = { stripe: 'Stripe', yoomoney: 'YooMoney', kofi: 'Ko-fi', signed: 'Signed intake' };

interface Flash {
  notice?: string;
  provider?: StreamerProviderId;
  errors?: FieldErrors;
  /** What was typed, shown back after an error (never a secret). */
  form?: Record<string, string>;
}

function enabledBox(t: Translator, on: boolean): Html {
  return html`<label class="check"><input type="checkbox" name="enabled" value="1"${on ? html` checked` : ''}> ${t.t('payments.enabled')}</label>`;
}

function copyable(label: string, value: string): Html {
  return html`<p>${label}<br><code class="copy">${value}</code></p>`;
}

function providerForm(t: Translator, provider: StreamerProviderId, userId: number, publicUrl: string, settings: StreamerSettings, csrf: string, flash: Flash): Html {
  const setting = settings.get(provider);
  const errors = flash.provider === provider ? flash.errors : undefined;
  const typed = flash.provider === provider ? flash.form ?? {} : {};
  const stored = setting?.credentials ?? {};
  const on = typed.enabled !== undefined ? typed.enabled === '1' : setting?.enabled === true;
  const action = `/dashboard/payments/${provider}`;
  if (provider === 'stripe') {
    return html`<form method="post" action="${action}">${csrfField(csrf)}
  <p>${t.t('payments.stripe.help')}</p>
  ${enabledBox(t, on)}
  <button type="submit">${t.t('payments.save')}</button>
</form>`;
  }
  if (provider === 'yoomoney') {
    return html`<form method="post" action="${action}" novalidate>${csrfField(csrf)}
  <p>${t.t('payments.yoomoney.help')}</p>
  ${copyable(t.t('payments.notification_url'), `${publicUrl}/payments/yoomoney/${userId}`)}
  <label>${t.t('payments.yoomoney.wallet')} <input name="wallet" inputmode="numeric" maxlength="24" value="${typed.wallet ?? stored.wallet ?? ''}" placeholder="4100…"></label>
  ${fieldErrors(errors, 'wallet')}
  <label>${t.t('payments.yoomoney.secret')} <small>${stored.notification_secret ? t.t('payments.secret_kept') : ''}</small>
    <input type="password" name="notification_secret" autocomplete="off" maxlength="200"></label>
  ${fieldErrors(errors, 'notification_secret')}
  ${enabledBox(t, on)}
  <button type="submit">${t.t('payments.save')}</button>
</form>`;
  }
  if (provider === 'kofi') {
    return html`<form method="post" action="${action}" novalidate>${csrfField(csrf)}
  <p>${t.t('payments.kofi.help')}</p>
  ${copyable(t.t('payments.webhook_url'), `${publicUrl}/payments/kofi/${userId}`)}
  <label>${t.t('payments.kofi.token')} <small>${stored.verification_token ? t.t('payments.secret_kept') : ''}</small>
    <input type="password" name="verification_token" autocomplete="off" maxlength="200"></label>
  ${fieldErrors(errors, 'verification_token')}
  <label>${t.t('payments.kofi.page_url')} <input type="url" name="page_url" maxlength="100" value="${typed.page_url ?? stored.page_url ?? ''}" placeholder="https://ko-fi.com/…"></label>
  ${fieldErrors(errors, 'page_url')}
  ${enabledBox(t, on)}
  <button type="submit">${t.t('payments.save')}</button>
</form>`;
  }
  return html`<form method="post" action="${action}">${csrfField(csrf)}
  <p>${t.t('payments.signed.help')}</p>
  ${copyable(t.t('payments.signed.endpoint'), `POST ${publicUrl}/api/v1/payments/${userId}/donations`)}
  ${stored.secret ? copyable(t.t('payments.signed.secret'), stored.secret) : ''}
  ${enabledBox(t, on)}
  <button type="submit">${t.t('payments.save')}</button>
</form>
${stored.secret
    ? html`<form method="post" action="/dashboard/payments/signed/rotate" data-confirm="${t.t('payments.signed.rotate_confirm')}">${csrfField(csrf)}<button type="submit" class="secondary">${t.t('payments.signed.rotate')}</button></form>`
    : ''}`;
}

async function render(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, flash: Flash = {}, status = 200) {
  const t = pageTranslator(request);
  const user = request.sessionUser!;
  const { payments, config } = app.ctx;
  const settings = await streamerPaymentSettings(app.ctx.db, app.ctx.secrets.encryptionKey, user.id);
  const csrf = reply.generateCsrf();
  const open = payments.donorProviders(settings).length > 0;
  const body = html`<section class="card">
<h1>${t.t('payments.title')}</h1>
${notice(flash.notice)}
<p>${t.t('payments.lead')}</p>
${payments.sandbox ? html`<p class="payment payment-test">${t.t('payments.sandbox_on')}</p>` : ''}
${open ? '' : html`<p class="error" role="alert">${t.t('payments.closed')}</p>`}
</section>
${STREAMER_PROVIDERS.map((provider) => html`<section class="card payments-${provider}" id="${provider}">
<h2>${NAMES[provider]}</h2>
${payments.instanceEnables(provider)
    ? providerForm(t, provider, user.id, config.publicUrl, settings, csrf, flash)
    : html`<p class="muted">${t.t('payments.not_on_instance', { provider: NAMES[provider] })}</p>`}
</section>`)}`;
  return sendPage(request, reply, csrf, { title: t.t('payments.title'), body, status });
}

/**
 * GET /dashboard/payments and POST /dashboard/payments/<provider>: the streamer's payment providers.
 * Accepted forms answer 303 to the page with a one-time notice; refused ones re-render as typed (422).
 */
export async function paymentsPages(app: FastifyInstance): Promise<void> {
  app.get('/dashboard/payments', (request, reply) => render(app, request, reply, { notice: takeFlash(request, reply).notice }));

  app.post<{ Params: { provider: string } }>('/dashboard/payments/:provider', async (request, reply) => {
    const provider = request.params.provider;
    if (!isStreamerProvider(provider) || !app.ctx.payments.instanceEnables(provider)) {
      return reply.callNotFound();
    }
    const enabled = field(request.body, 'enabled') === '1';
    const credentials = { wallet: field(request.body, 'wallet'), notification_secret: field(request.body, 'notification_secret'), verification_token: field(request.body, 'verification_token'), page_url: field(request.body, 'page_url') };
    try {
      await savePaymentSetting(app.ctx.db, app.ctx.secrets.encryptionKey, request.sessionUser!.id, provider, { enabled, credentials });
      return redirectWithFlash(request, reply, `/dashboard/payments#${provider}`, { notice: pageTranslator(request).t('payments.saved', { provider: NAMES[provider] }) });
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      return render(app, request, reply, { provider, errors: fieldErrorTexts(pageTranslator(request), err), form: { enabled: enabled ? '1' : '0', wallet: credentials.wallet, page_url: credentials.page_url } }, 422);
    }
  });

  app.post('/dashboard/payments/signed/rotate', async (request, reply) => {
    if (!app.ctx.payments.instanceEnables('signed')) return reply.callNotFound();
    await rotateSigningSecret(app.ctx.db, app.ctx.secrets.encryptionKey, request.sessionUser!.id);
    return redirectWithFlash(request, reply, '/dashboard/payments#signed', { notice: pageTranslator(request).t('payments.signed.rotated') });
  });
}
