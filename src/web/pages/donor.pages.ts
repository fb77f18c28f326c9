import { createHmac } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { INPUT_CURRENCIES, isInputCurrency } from '../../domain/currency.js';
import { NotFoundError, ValidationError } from '../../domain/errors.js';
import { AmountError, toMinor } from '../../domain/money.js';
import { userByCode } from '../../modules/accounts/accounts.service.js';
import type { UserRow } from '../../modules/accounts/accounts.table.js';
import { createDonation, DONATION_LIMITS, donationOf } from '../../modules/donations/donations.service.js';
import { testPaymentProvider, type PaymentProvider } from '../../modules/donations/payment-provider.js';
import { listGoals } from '../../modules/goals/goals.service.js';
import type { GoalDetails } from '../../modules/goals/goals.resource.js';
import { getActivePoll } from '../../modules/polls/polls.service.js';
import type { PollDetails } from '../../modules/polls/polls.resource.js';
import { safeEqual } from '../../security/crypto.js';
import { html, type Html } from '../html.js';
import { isLocale } from '../../i18n/locales.js';
import { translator, type Translator } from '../../i18n/translator.js';
import { donorTranslator, visitorLocale } from '../i18n.js';
import { donorModerationGate } from './donor-moderation.js';
import { errorPage, fieldErrors, languageSwitcher, page } from '../layout.js';

/**
 * The public donor page /r/<code>: a plain HTML form (works without JavaScript; donor.js only adds
 * the message counter), CSRF-protected, through a pluggable payment step. A successful donation
 * goes to /r/<code>/thanks/<id>?t=<tag>: the tag is an HMAC of the donation, so only the donor
 * who was redirected there can read it back — donation ids are sequential and guessable.
 */
export interface DonorPagesOptions {
  paymentProvider?: PaymentProvider;
}

interface DonorForm {
  username: string;
  amount: string;
  currency: string;
  message: string;
  /** '' (no vote), an option id, or 'own'. */
  poll_option: string;
  poll_option_title: string;
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

function donorPage(
  t: Translator, streamer: UserRow, csrf: string, provider: PaymentProvider, goals: GoalDetails[], poll: PollDetails | null, f: DonorForm, errors?: Record<string, string[]>,
): Html {
  const general = errors?.form;
  return html`<section class="card donor">
${languageSwitcher(t, `/r/${streamer.code}`)}
<div class="donor-head">
  <img class="donor-avatar" src="${streamer.avatar ?? `/avatars/${streamer.id}.svg`}" alt="" width="72" height="72">
  <div><h1>${t.t('donor.heading', { name: streamer.name })}</h1><p class="muted">${t.t('donor.lead')}</p></div>
</div>
${goalsBlock(t, goals)}
${general ? html`<p class="error" role="alert">${general.join(' ')}</p>` : ''}
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
  <textarea id="donor-message" name="message" rows="4" maxlength="${DONATION_LIMITS.message}" data-counter="message-count">${f.message}</textarea>
  <p class="counter">${t.rich('donor.counter', { count: f.message.length, max: DONATION_LIMITS.message, n: (chunks) => html`<span id="message-count">${chunks}</span>` })}</p>
  ${fieldErrors(errors, 'message')}
  ${pollBlock(t, poll, f, errors)}
  <div class="payment${provider.isTest ? ' payment-test' : ''}">
    <strong>${t.t('donor.payment', { provider: providerText(t, provider, 'label') })}</strong>
    <p>${providerText(t, provider, 'description')}</p>
  </div>
  <button type="submit">${t.t('donor.submit')}</button>
</form>
</section>`;
}

/** Ties a thank-you URL to one donation of one streamer (HMAC with the app's cookie key). */
function thanksTag(key: string, userId: number, donationId: number): string {
  return createHmac('sha256', key).update(`donation-thanks:${userId}:${donationId}`).digest('base64url').slice(0, 22);
}

const HTML = 'text/html; charset=utf-8';
const head = html`<link rel="stylesheet" href="/static/widget-pages.css"><script src="/static/donor.js" defer></script>`;

export async function donorPages(app: FastifyInstance, opts: DonorPagesOptions): Promise<void> {
  const { db } = app.ctx;
  const provider = opts.paymentProvider ?? testPaymentProvider;
  const tagKey = app.ctx.secrets.cookieSecret;

  const moderationGate = donorModerationGate(app);

  const findStreamer = async (code: string): Promise<UserRow | null> => {
    const user = await userByCode(db, code.toLowerCase());
    return user && user.is_active ? user : null;
  };
  const notFound = (t: Translator, reply: FastifyReply) =>
    reply.status(404).header('cache-control', 'no-store').type(HTML).send(errorPage(404, t.t('donor.not_found'), t));

  const render = async (t: Translator, request: FastifyRequest, reply: FastifyReply, streamer: UserRow, f: DonorForm, errors?: Record<string, string[]>, status = 200) => {
    const [goals, poll] = await Promise.all([listGoals(db, streamer.id, { state: 'active' }), getActivePoll(db, streamer.id)]);
    const csrf = reply.generateCsrf();
    const body = donorPage(t, streamer, csrf, provider, goals, poll, f, errors);
    return reply
      .status(status)
      .header('cache-control', 'no-store')
      .header('vary', 'accept-language, cookie')
      .type(HTML)
      .send(page({ t, title: t.t('donor.page_title', { name: streamer.name }), user: request.sessionUser, csrf, body, head }));
  };

  app.get<{ Params: { code: string } }>('/r/:code', async (request, reply) => {
    const t = donorTranslator(request, reply);
    const streamer = await findStreamer(request.params.code);
    if (!streamer) return notFound(t, reply);
    return render(t, request, reply, streamer, { username: '', amount: '', currency: isInputCurrency(streamer.currency) ? streamer.currency : 'USD', message: '', poll_option: '', poll_option_title: '' });
  });

  app.post<{ Params: { code: string } }>(
    '/r/:code',
    { preHandler: app.csrfProtection, config: { rateLimit: { max: 30, timeWindow: 60_000, skipOnError: true } } },
    async (request, reply) => {
      // The form says which language it was shown in (a switcher choice survives without cookies).
      const shownIn = (request.body as Record<string, unknown> | undefined)?.lang;
      const t = isLocale(shownIn) ? translator(shownIn) : translator(visitorLocale(request));
      const streamer = await findStreamer(request.params.code);
      if (!streamer) return notFound(t, reply);
      const f = readForm(request.body);
      const errors = formErrors(t, f);
      if (Object.keys(errors).length) return render(t, request, reply, streamer, f, errors, 422);
      // The streamer's moderation: refuse what a rule rejects, and rate limits, before payment.
      const gate = await moderationGate(request, t, streamer.id, { username: f.username.trim(), message: f.message, pollOptionTitle: f.poll_option === 'own' ? f.poll_option_title : undefined });
      if (!gate.ok) {
        if ('retryAfter' in gate) reply.header('retry-after', gate.retryAfter);
        return render(t, request, reply, streamer, f, gate.errors, 'retryAfter' in gate ? 429 : 422);
      }
      const vote =
        f.poll_option === 'own' ? { pollOptionTitle: f.poll_option_title } : f.poll_option ? { pollOptionId: Number(f.poll_option) } : {};
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
        for (const [field, messages] of Object.entries(err.errors)) {
          const target = field === 'poll_option_id' || field === 'poll_option_title' ? 'poll' : ['username', 'amount', 'currency', 'message'].includes(field) ? field : 'form';
          (shown[target] ??= []).push(...messages);
        }
        return render(t, request, reply, streamer, f, shown, 422);
      }
      const lang = t.locale === visitorLocale(request) ? '' : `&lang=${t.locale}`;
      return reply.redirect(`/r/${streamer.code}/thanks/${donationId}?t=${thanksTag(tagKey, streamer.id, donationId)}${lang}`, 303);
    },
  );

  app.get<{ Params: { code: string; id: string }; Querystring: { t?: string } }>('/r/:code/thanks/:id', async (request, reply) => {
    const t = donorTranslator(request, reply);
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
${provider.isTest ? html`<p class="payment payment-test">${t.t('donor.thanks.test_payment')}</p>` : ''}
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
