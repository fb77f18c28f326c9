import { createHmac } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { INPUT_CURRENCIES, isInputCurrency } from '../../domain/currency.js';
import { NotFoundError, ValidationError } from '../../domain/errors.js';
import { AmountError, toMinor } from '../../domain/money.js';
import { userByCode } from '../../modules/accounts/accounts.service.js';
import type { UserRow } from '../../modules/accounts/accounts.table.js';
import { createDonation, DONATION_LIMITS, donationOf } from '../../modules/donations/donations.service.js';
import { CheckoutUnavailable, TEST_PAYIN_SYSTEM, type CheckoutStep, type PaymentProvider } from '../../modules/donations/payment-provider.js';
import { streamerPaymentSettings } from '../../modules/payments/payment-settings.service.js';
import { attachCheckout, createPendingDonation, pendingDonation } from '../../modules/payments/payments.service.js';
import { listGoals } from '../../modules/goals/goals.service.js';
import type { GoalDetails } from '../../modules/goals/goals.resource.js';
import { moderationSettings, type ModerationSettings } from '../../modules/moderation/moderation.service.js';
import { getActivePoll } from '../../modules/polls/polls.service.js';
import type { PollDetails } from '../../modules/polls/polls.resource.js';
import { safeEqual } from '../../security/crypto.js';
import { html, type Html } from '../html.js';
import { isLocale } from '../../i18n/locales.js';
import { translator, type Translator } from '../../i18n/translator.js';
import { donorTranslator, visitorLocale } from '../i18n.js';
import { fieldErrorTexts } from '../error-text.js';
import { donorModerationGate } from './donor-moderation.js';
import { errorPage, fieldErrors, languageSwitcher, page } from '../layout.js';

/**
 * The public donor page /r/<code>: a plain HTML form (works without JavaScript; donor.js only adds
 * the message counter and submits the provider hand-off form), CSRF-protected, through the
 * payment providers the instance runs and the streamer turned on (modules/payments). With none,
 * the page says donations are not open. An instant provider (the test provider) records at once;
 * a checkout provider gets a pending donation and the donor is sent to pay, then back to
 * /r/<code>/paid/<ref>, which waits for the provider's notification. A recorded donation is shown
 * at /r/<code>/thanks/<id>?t=<tag>: the tag is an HMAC of the donation, so only the donor who was
 * redirected there can read it back — donation ids are sequential and guessable.
 */

interface DonorForm {
  username: string;
  amount: string;
  currency: string;
  message: string;
  /** '' (no vote), an option id, or 'own'. */
  poll_option: string;
  poll_option_title: string;
  /** The chosen provider's id ('' when the page offers one). */
  provider: string;
}

/** What the streamer's donor page offers: its payment providers (none: donations are not open) and a Ko-fi link. */
interface Offer {
  providers: PaymentProvider[];
  kofiPage: string | null;
  credentials: (provider: PaymentProvider) => Readonly<Record<string, string>>;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function readForm(body: unknown): DonorForm {
  const b = (body ?? {}) as Record<string, unknown>;
  return {
    username: str(b.username),
    amount: str(b.amount),
    currency: str(b.currency),
    message: str(b.message),
    poll_option: str(b.poll_option),
    poll_option_title: str(b.poll_option_title),
    provider: str(b.provider),
  };
}

/** Checks that need no database, run before any money moves; messages in the donor's language. */
function formErrors(t: Translator, f: DonorForm): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  if ([...f.username.trim()].length > DONATION_LIMITS.username) errors.username = [t.t('donor.error.name_too_long', { max: DONATION_LIMITS.username })];
  try {
    if (toMinor(f.amount) <= 0) errors.amount = [t.t('donor.error.amount_positive')];
  } catch (err) {
    if (!(err instanceof AmountError)) throw err;
    errors.amount = [
      f.amount.trim() === ''
        ? t.t('donor.error.amount_required')
        : err.problem === 'decimals'
          ? t.t('donor.error.amount_decimals')
          : err.problem === 'too_large'
            ? t.t('donor.error.amount_too_large')
            : t.t('donor.error.amount_format', { example: t.decimal(10.5) }),
    ];
  }
  if (!isInputCurrency(f.currency)) errors.currency = [t.t('donor.error.currency', { list: INPUT_CURRENCIES.join(', ') })];
  if (f.message.length > DONATION_LIMITS.message) errors.message = [t.t('donor.error.message_too_long', { max: DONATION_LIMITS.message })];
  if (f.poll_option !== '' && f.poll_option !== 'own' && !/^[1-9]\d{0,14}$/.test(f.poll_option)) errors.poll = [t.t('donor.error.poll_choose')];
  if (f.poll_option === 'own' && f.poll_option_title.trim() === '') errors.poll = [t.t('donor.error.poll_own_empty')];
  return errors;
}

function goalsBlock(t: Translator, goals: GoalDetails[]): Html {
  if (goals.length === 0) return html``;
  return html`<section class="donor-goals" aria-label="${t.t('donor.goals')}">${goals.map((g) => {
    const percent = g.goal_amount > 0 ? Math.min(100, Math.floor((g.raised_amount / g.goal_amount) * 100)) : 0;
    return html`<div class="donor-goal">
  <div class="donor-goal-head"><strong>${g.title}</strong><span>${t.t('donor.goal_progress', { raised: t.moneyMajor(g.raised_amount, g.currency), goal: t.moneyMajor(g.goal_amount, g.currency) })}</span></div>
  <progress max="100" value="${percent}">${t.number(percent)}%</progress>
</div>`;
  })}</section>`;
}

function pollBlock(t: Translator, poll: PollDetails | null, f: DonorForm, errors?: Record<string, string[]>): Html {
  if (!poll) return html``;
  return html`<fieldset class="donor-poll">
  <legend>${t.t('donor.poll_legend', { title: poll.title })}</legend>
  <label class="choice"><input type="radio" name="poll_option" value="" ${f.poll_option === '' ? 'checked' : ''}> ${t.t('donor.poll_none')}</label>
  ${poll.options.map((o) => html`<label class="choice"><input type="radio" name="poll_option" value="${o.id}" ${f.poll_option === String(o.id) ? 'checked' : ''}> ${o.title} <small>(${t.number(Math.round(o.amount_percent))}%)</small></label>`)}
  ${poll.allow_user_options
    ? html`<label class="choice"><input type="radio" name="poll_option" value="own" ${f.poll_option === 'own' ? 'checked' : ''}> ${t.t('donor.poll_own')}</label>
  <input name="poll_option_title" maxlength="100" aria-label="${t.t('donor.poll_own_label')}" value="${f.poll_option_title}">`
    : ''}
  ${fieldErrors(errors, 'poll')}
</fieldset>`;
}

/** The provider's own words, unless the catalog translates this provider (`payment.<id>.*`). */
function providerText(t: Translator, provider: PaymentProvider, part: 'label' | 'description'): string {
  const key = `payment.${provider.id}.${part}`;
  return t.has(key) ? t.t(key) : provider[part];
}

/** The chosen provider, or the only one; its currencies bound the form's. */
function chosenProvider(offer: Offer, f: DonorForm): PaymentProvider | undefined {
  return offer.providers.find((p) => p.id === f.provider) ?? (offer.providers.length === 1 ? offer.providers[0] : undefined);
}

/** Checks of the payment choice, in the donor's language. */
function paymentErrors(t: Translator, offer: Offer, f: DonorForm): Record<string, string[]> {
  const provider = chosenProvider(offer, f);
  if (!provider) return { provider: [t.t('donor.error.provider')] };
  if (isInputCurrency(f.currency) && !provider.currencies.includes(f.currency)) {
    return { currency: [t.t('donor.error.provider_currency', { provider: providerText(t, provider, 'label'), list: provider.currencies.join(', ') })] };
  }
  return {};
}

function paymentBlock(t: Translator, offer: Offer, f: DonorForm, errors?: Record<string, string[]>): Html {
  const [only] = offer.providers;
  if (offer.providers.length === 1 && only) {
    return html`<input type="hidden" name="provider" value="${only.id}">
  <div class="payment${only.isTest ? ' payment-test' : ''}">
    <strong>${t.t('donor.payment', { provider: providerText(t, only, 'label') })}</strong>
    <p>${providerText(t, only, 'description')}</p>
  </div>`;
  }
  const chosen = chosenProvider(offer, f)?.id ?? offer.providers[0]?.id;
  return html`<fieldset class="donor-providers">
  <legend>${t.t('donor.pay_with')}</legend>
  ${offer.providers.map((p) => html`<label class="choice payment${p.isTest ? ' payment-test' : ''}"><input type="radio" name="provider" value="${p.id}" ${p.id === chosen ? 'checked' : ''}> <strong>${providerText(t, p, 'label')}</strong>
    <small>${providerText(t, p, 'description')}</small></label>`)}
  ${fieldErrors(errors, 'provider')}
</fieldset>`;
}

function kofiLink(t: Translator, streamer: UserRow, offer: Offer): Html {
  return offer.kofiPage ? html`<p class="donor-kofi"><a href="${offer.kofiPage}" rel="noopener noreferrer" target="_blank">${t.t('donor.kofi', { name: streamer.name })}</a></p>` : html``;
}

/** The streamer's moderation limits a donor should know before typing: shown up front, not only refused after submit. */
interface MessageLimits {
  /** The longest message the streamer shows (their limit or the service's, whichever is lower). */
  maxLength: number;
  /** Set by the streamer (a stricter limit than the service's): say so. */
  streamerLimit: boolean;
  /** Minor units of the streamer's currency below which the alert shows without the message (0: none). */
  minAmount: number;
  currency: string;
}

function messageLimits(settings: ModerationSettings | null, streamer: UserRow): MessageLimits {
  const own = settings?.maxMessageLength ?? null;
  const maxLength = own === null ? DONATION_LIMITS.message : Math.min(own, DONATION_LIMITS.message);
  return { maxLength, streamerLimit: own !== null && own < DONATION_LIMITS.message, minAmount: settings?.minMessageAmount ?? 0, currency: streamer.currency };
}

function limitHints(t: Translator, streamer: UserRow, limits: MessageLimits): Html {
  const hints: string[] = [];
  if (limits.maxLength === 0) hints.push(t.t('donor.limit.no_messages', { name: streamer.name }));
  else {
    if (limits.streamerLimit) hints.push(t.t('donor.limit.message_max', { name: streamer.name, max: limits.maxLength }));
    if (limits.minAmount > 0) hints.push(t.t('donor.limit.min_message_amount', { amount: t.money(limits.minAmount, limits.currency) }));
  }
  return hints.length ? html`<p class="hint donor-limits" id="donor-message-limits">${hints.join(' ')}</p>` : html``;
}

function donorPage(
  t: Translator, streamer: UserRow, csrf: string, offer: Offer, goals: GoalDetails[], poll: PollDetails | null, f: DonorForm, limits: MessageLimits, errors?: Record<string, string[]>,
): Html {
  // A vote the service refused after the poll ended: the poll is gone from the form, so say it above.
  const general = [...(errors?.form ?? []), ...(poll ? [] : errors?.poll ?? [])];
  if (offer.providers.length === 0) {
    return html`<section class="card donor donor-closed">
${languageSwitcher(t, `/r/${streamer.code}`)}
<div class="donor-head">
  <img class="donor-avatar" src="${streamer.avatar ?? `/avatars/${streamer.id}.svg`}" alt="" width="72" height="72">
  <div><h1>${t.t('donor.heading', { name: streamer.name })}</h1><p class="notice" role="status">${t.t('donor.closed', { name: streamer.name })}</p></div>
</div>
${kofiLink(t, streamer, offer)}
</section>`;
  }
  return html`<section class="card donor">
${languageSwitcher(t, `/r/${streamer.code}`)}
<div class="donor-head">
  <img class="donor-avatar" src="${streamer.avatar ?? `/avatars/${streamer.id}.svg`}" alt="" width="72" height="72">
  <div><h1>${t.t('donor.heading', { name: streamer.name })}</h1><p class="muted">${t.t('donor.lead')}</p></div>
</div>
${goalsBlock(t, goals)}
${general.length ? html`<p class="error" role="alert">${general.join(' ')}</p>` : ''}
<form method="post" action="/r/${streamer.code}" class="donor-form" novalidate>
  <input type="hidden" name="_csrf" value="${csrf}">
  <input type="hidden" name="lang" value="${t.locale}">
  <label>${t.t('donor.name')} <small>${t.t('donor.name_hint', { max: DONATION_LIMITS.username })}</small>
    <input name="username" maxlength="${DONATION_LIMITS.username}" autocomplete="nickname" placeholder="${t.t('widget.anonymous')}" value="${f.username}"></label>
  ${fieldErrors(errors, 'username')}
  <div class="row">
    <label>${t.t('donor.amount')} <input name="amount" inputmode="decimal" required placeholder="${t.decimal(5)}" value="${f.amount}"></label>
    <label>${t.t('donor.currency')} <select name="currency">${INPUT_CURRENCIES.map((c) => html`<option ${c === f.currency ? 'selected' : ''}>${c}</option>`)}</select></label>
  </div>
  ${fieldErrors(errors, 'amount')}${fieldErrors(errors, 'currency')}
  <label for="donor-message">${t.t('donor.message')} <small>${t.t('donor.optional')}</small></label>
  <textarea id="donor-message" name="message" rows="4" maxlength="${limits.maxLength}" data-counter="message-count" aria-describedby="donor-message-count donor-message-limits">${f.message}</textarea>
  <p class="counter" id="donor-message-count">${t.rich('donor.counter', { count: f.message.length, max: limits.maxLength, n: (chunks) => html`<span id="message-count">${chunks}</span>` })}</p>
  ${limitHints(t, streamer, limits)}
  ${fieldErrors(errors, 'message')}
  ${pollBlock(t, poll, f, errors)}
  ${paymentBlock(t, offer, f, errors)}
  <button type="submit">${t.t('donor.submit')}</button>
</form>
${kofiLink(t, streamer, offer)}
</section>`;
}

/** Ties a thank-you URL to one donation of one streamer (HMAC with the app's cookie key). */
function thanksTag(key: string, userId: number, donationId: number): string {
  return createHmac('sha256', key).update(`donation-thanks:${userId}:${donationId}`).digest('base64url').slice(0, 22);
}

const HTML = 'text/html; charset=utf-8';
const head = html`<link rel="stylesheet" href="/static/widget-pages.css"><script src="/static/donor.js" defer></script>`;

/** The hand-off to a provider that takes a posted form (YooMoney quickpay): donor.js submits it, or the donor does. */
function handOffPage(t: Translator, provider: PaymentProvider, step: Extract<CheckoutStep, { kind: 'form' }>): Html {
  const label = providerText(t, provider, 'label');
  return html`<section class="card narrow donor-handoff">
<h1>${t.t('donor.handoff.heading', { provider: label })}</h1>
<form method="post" action="${step.action}" data-autosubmit-form>
  ${Object.entries(step.fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
  <button type="submit">${t.t('donor.handoff.continue', { provider: label })}</button>
</form>
</section>`;
}

export async function donorPages(app: FastifyInstance): Promise<void> {
  const { db, payments } = app.ctx;
  const tagKey = app.ctx.secrets.cookieSecret;
  const offerOf = async (streamer: UserRow): Promise<Offer> => {
    const settings = await streamerPaymentSettings(db, app.ctx.secrets.encryptionKey, streamer.id);
    return {
      providers: payments.donorProviders(settings),
      kofiPage: payments.kofiPage(settings),
      credentials: (provider) => (provider.id === 'test' ? {} : settings.get(provider.id)?.credentials ?? {}),
    };
  };

  const moderationGate = donorModerationGate(app);

  const findStreamer = async (code: string): Promise<UserRow | null> => {
    const user = await userByCode(db, code.toLowerCase());
    return user && user.is_active ? user : null;
  };
  const notFound = (t: Translator, reply: FastifyReply) =>
    reply.status(404).header('cache-control', 'no-store').type(HTML).send(errorPage(404, t.t('donor.not_found'), t));

  const render = async (t: Translator, request: FastifyRequest, reply: FastifyReply, streamer: UserRow, offer: Offer, f: DonorForm, errors?: Record<string, string[]>, status = 200) => {
    const [goals, poll, settings] = await Promise.all([listGoals(db, streamer.id, { state: 'active' }), getActivePoll(db, streamer.id), moderationSettings(db, streamer.id)]);
    const csrf = reply.generateCsrf();
    const body = donorPage(t, streamer, csrf, offer, goals, poll, f, messageLimits(settings, streamer), errors);
    return reply
      .status(status)
      .header('cache-control', 'no-store')
      .header('vary', 'accept-language, cookie')
      .type(HTML)
      .send(page({ t, title: t.t('donor.page_title', { name: streamer.name }), user: request.sessionUser, csrf, body, head }));
  };

  app.get<{ Params: { code: string } }>('/r/:code', async (request, reply) => {
    const t = await donorTranslator(request, reply);
    const streamer = await findStreamer(request.params.code);
    if (!streamer) return notFound(t, reply);
    const offer = await offerOf(streamer);
    const currency = isInputCurrency(streamer.currency) ? streamer.currency : 'USD';
    return render(t, request, reply, streamer, offer, { username: '', amount: '', currency, message: '', poll_option: '', poll_option_title: '', provider: '' });
  });

  app.post<{ Params: { code: string } }>('/r/:code', async (request, reply) => {
    // The form says which language it was shown in (a switcher choice survives without cookies).
    const shownIn = (request.body as Record<string, unknown> | undefined)?.lang;
    const t = await translator(isLocale(shownIn) ? shownIn : visitorLocale(request));
    const streamer = await findStreamer(request.params.code);
    if (!streamer) return notFound(t, reply);
    const f = readForm(request.body);
    const offer = await offerOf(streamer);
    // No provider: donations are not open, and nothing is recorded for free.
    if (offer.providers.length === 0) return render(t, request, reply, streamer, offer, f, undefined, 403);
    const errors = { ...formErrors(t, f), ...paymentErrors(t, offer, f) };
    if (Object.keys(errors).length) return render(t, request, reply, streamer, offer, f, errors, 422);
    // The streamer's moderation: refuse what a rule rejects, and rate limits, before payment.
    const gate = await moderationGate(request, t, streamer.id, { username: f.username.trim(), message: f.message, pollOptionTitle: f.poll_option === 'own' ? f.poll_option_title : undefined });
    if (!gate.ok) {
      if ('retryAfter' in gate) reply.header('retry-after', gate.retryAfter);
      return render(t, request, reply, streamer, offer, f, gate.errors, 'retryAfter' in gate ? 429 : 422);
    }
    const provider = chosenProvider(offer, f)!;
    const vote =
      f.poll_option === 'own' ? { pollOptionTitle: f.poll_option_title } : f.poll_option ? { pollOptionId: Number(f.poll_option) } : {};
    const lang = t.locale === visitorLocale(request) ? '' : `&lang=${t.locale}`;
    if (provider.kind === 'checkout') {
      const pending = await createPendingDonation(db, {
        userId: streamer.id, provider: provider.id, amount: toMinor(f.amount), currency: f.currency, username: f.username.trim(), message: f.message, ...vote,
      });
      const base = `${app.ctx.config.publicUrl}/r/${streamer.code}`;
      let step: CheckoutStep;
      try {
        step = await provider.beginCheckout({
          streamer: { id: streamer.id, code: streamer.code, name: streamer.name },
          pending,
          credentials: offer.credentials(provider),
          returnUrl: `${base}/paid/${pending.ref}${lang.replace('&', '?')}`,
          cancelUrl: base,
        });
      } catch (err) {
        if (!(err instanceof CheckoutUnavailable)) throw err;
        request.log.warn({ err, provider: provider.id, pendingRef: pending.ref }, 'checkout could not be opened');
        return render(t, request, reply, streamer, offer, f, { form: [t.t('donor.error.provider_unavailable', { provider: providerText(t, provider, 'label') })] }, 503);
      }
      if (step.kind === 'redirect') {
        if (step.checkoutId) await attachCheckout(db, pending.id, step.checkoutId);
        return reply.redirect(step.url, 303);
      }
      return reply
        .header('cache-control', 'no-store')
        .type(HTML)
        .send(page({ t, title: t.t('donor.handoff.heading', { provider: providerText(t, provider, 'label') }), user: request.sessionUser, csrf: reply.generateCsrf(), body: handOffPage(t, provider, step), head }));
    }
    let donationId: number;
    try {
      const settled = await provider.settle({ userId: streamer.id, amount: f.amount, currency: f.currency, username: f.username.trim() });
      const donation = await createDonation(db, {
        userId: streamer.id,
        username: f.username,
        message: f.message,
        amount: f.amount,
        currency: f.currency,
        payinSystem: settled.payinSystem,
        ...vote,
      });
      donationId = donation.id;
    } catch (err) {
      if (err instanceof NotFoundError) return notFound(t, reply);
      if (!(err instanceof ValidationError)) throw err;
      const shown: Record<string, string[]> = {};
      for (const [field, messages] of Object.entries(fieldErrorTexts(t, err))) {
        const target = field === 'poll_option_id' || field === 'poll_option_title' ? 'poll' : ['username', 'amount', 'currency', 'message'].includes(field) ? field : 'form';
        (shown[target] ??= []).push(...messages);
      }
      return render(t, request, reply, streamer, offer, f, shown, 422);
    }
    return reply.redirect(`/r/${streamer.code}/thanks/${donationId}?t=${thanksTag(tagKey, streamer.id, donationId)}${lang}`, 303);
  });

  // Back from a hosted checkout: the reference is random and unguessable, so it is its own proof.
  // The page refreshes itself (no script needed) until the provider's notification has recorded
  // the donation, then sends the donor on to the thanks page.
  app.get<{ Params: { code: string; ref: string } }>('/r/:code/paid/:ref', async (request, reply) => {
    const t = await donorTranslator(request, reply);
    const streamer = await findStreamer(request.params.code);
    const pending = streamer && /^[A-Za-z0-9_-]{16,64}$/.test(request.params.ref) ? await pendingDonation(db, request.params.ref) : undefined;
    if (!streamer || !pending || pending.user_id !== streamer.id) return notFound(t, reply);
    if (pending.donation_id !== null) {
      return reply.header('cache-control', 'no-store').redirect(`/r/${streamer.code}/thanks/${pending.donation_id}?t=${thanksTag(tagKey, streamer.id, pending.donation_id)}`, 303);
    }
    const body = html`<section class="card narrow donor-waiting">
<h1>${t.t('donor.waiting.heading')}</h1>
<p role="status">${t.t('donor.waiting.lead', { amount: t.money(pending.amount, pending.currency), name: streamer.name })}</p>
<p><a href="/r/${streamer.code}/paid/${pending.ref}">${t.t('donor.waiting.refresh')}</a></p>
</section>`;
    return reply
      .header('cache-control', 'no-store')
      .header('referrer-policy', 'no-referrer')
      .type(HTML)
      .send(page({ t, title: t.t('donor.waiting.heading'), user: request.sessionUser, csrf: reply.generateCsrf(), body, head: html`${head}<meta http-equiv="refresh" content="3">` }));
  });

  app.get<{ Params: { code: string; id: string }; Querystring: { t?: string } }>('/r/:code/thanks/:id', async (request, reply) => {
    const t = await donorTranslator(request, reply);
    const streamer = await findStreamer(request.params.code);
    const id = /^[1-9]\d{0,14}$/.test(request.params.id) ? Number(request.params.id) : 0;
    const tag = typeof request.query.t === 'string' ? request.query.t : '';
    if (!streamer || !id || !safeEqual(tag, thanksTag(tagKey, streamer.id, id))) return notFound(t, reply);
    const donation = await donationOf(db, streamer.id, id);
    if (!donation) return notFound(t, reply);
    const strong = (chunks: Html[]) => html`<strong>${chunks}</strong>`;
    const amount = t.money(donation.amount, donation.currency);
    const received = donation.payin_system
      ? t.rich('donor.thanks.received_via', { amount, name: streamer.name, method: donation.payin_system, b: strong })
      : t.rich('donor.thanks.received', { amount, name: streamer.name, b: strong });
    const body = html`<section class="card narrow donor-thanks">
<h1>${t.t('donor.thanks.heading')}</h1>
<p>${received}</p>
${donation.payin_system === TEST_PAYIN_SYSTEM ? html`<p class="payment payment-test">${t.t('donor.thanks.test_payment')}</p>` : ''}
<dl class="facts"><dt>${t.t('donor.thanks.name')}</dt><dd>${donation.username}</dd>${donation.message ? html`<dt>${t.t('donor.thanks.message')}</dt><dd class="donor-message-text">${donation.message}</dd>` : ''}</dl>
<p><a href="/r/${streamer.code}">${t.t('donor.thanks.back', { name: streamer.name })}</a></p>
</section>`;
    return reply
      .header('cache-control', 'no-store')
      .header('referrer-policy', 'no-referrer')
      .type(HTML)
      .send(page({ t, title: t.t('donor.thanks.page_title'), user: request.sessionUser, csrf: reply.generateCsrf(), body, head }));
  });
}
