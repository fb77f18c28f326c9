import { createHmac } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { INPUT_CURRENCIES, isInputCurrency } from '../../domain/currency.js';
import { NotFoundError, ValidationError } from '../../domain/errors.js';
import { AmountError, toMajor, toMinor } from '../../domain/money.js';
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
import { errorPage, fieldErrors, page } from '../layout.js';

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

/** Checks that need no database, run before any money moves. */
function formErrors(f: DonorForm): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  if ([...f.username.trim()].length > DONATION_LIMITS.username) errors.username = [`Your name must not be greater than ${DONATION_LIMITS.username} characters.`];
  try {
    if (toMinor(f.amount) <= 0) errors.amount = ['The amount must be greater than 0.'];
  } catch (err) {
    if (!(err instanceof AmountError)) throw err;
    errors.amount = [f.amount.trim() === '' ? 'Enter an amount.' : `The amount ${err.message}`];
  }
  if (!isInputCurrency(f.currency)) errors.currency = [`Choose one of ${INPUT_CURRENCIES.join(', ')}.`];
  if (f.message.length > DONATION_LIMITS.message) errors.message = [`The message must not be greater than ${DONATION_LIMITS.message} characters.`];
  if (f.poll_option !== '' && f.poll_option !== 'own' && !/^[1-9]\d{0,14}$/.test(f.poll_option)) errors.poll = ['Choose one of the poll options.'];
  if (f.poll_option === 'own' && f.poll_option_title.trim() === '') errors.poll = ['Type your own option, or choose one of the listed ones.'];
  return errors;
}

function goalsBlock(goals: GoalDetails[]): Html {
  if (goals.length === 0) return html``;
  return html`<section class="donor-goals" aria-label="Goals">${goals.map((g) => {
    const percent = g.goal_amount > 0 ? Math.min(100, Math.floor((g.raised_amount / g.goal_amount) * 100)) : 0;
    return html`<div class="donor-goal">
  <div class="donor-goal-head"><strong>${g.title}</strong><span>${g.raised_amount} / ${g.goal_amount} ${g.currency}</span></div>
  <progress max="100" value="${percent}">${percent}%</progress>
</div>`;
  })}</section>`;
}

function pollBlock(poll: PollDetails | null, f: DonorForm, errors?: Record<string, string[]>): Html {
  if (!poll) return html``;
  return html`<fieldset class="donor-poll">
  <legend>Vote with your donation: ${poll.title}</legend>
  <label class="choice"><input type="radio" name="poll_option" value="" ${f.poll_option === '' ? 'checked' : ''}> No vote</label>
  ${poll.options.map((o) => html`<label class="choice"><input type="radio" name="poll_option" value="${o.id}" ${f.poll_option === String(o.id) ? 'checked' : ''}> ${o.title} <small>(${Math.round(o.amount_percent)}%)</small></label>`)}
  ${poll.allow_user_options
    ? html`<label class="choice"><input type="radio" name="poll_option" value="own" ${f.poll_option === 'own' ? 'checked' : ''}> My own option:</label>
  <input name="poll_option_title" maxlength="100" aria-label="Your own poll option" value="${f.poll_option_title}">`
    : ''}
  ${fieldErrors(errors, 'poll')}
</fieldset>`;
}

function donorPage(
  streamer: UserRow, csrf: string, provider: PaymentProvider, goals: GoalDetails[], poll: PollDetails | null, f: DonorForm, errors?: Record<string, string[]>,
): Html {
  const general = errors?.form;
  return html`<section class="card donor">
<div class="donor-head">
  <img class="donor-avatar" src="${streamer.avatar ?? `/avatars/${streamer.id}.svg`}" alt="" width="72" height="72">
  <div><h1>Support ${streamer.name}</h1><p class="muted">Your name, amount and message appear on the stream.</p></div>
</div>
${goalsBlock(goals)}
${general ? html`<p class="error" role="alert">${general.join(' ')}</p>` : ''}
<form method="post" action="/r/${streamer.code}" class="donor-form" novalidate>
  <input type="hidden" name="_csrf" value="${csrf}">
  <label>Your name <small>(optional, up to ${DONATION_LIMITS.username} characters)</small>
    <input name="username" maxlength="${DONATION_LIMITS.username}" autocomplete="nickname" placeholder="Anonymous" value="${f.username}"></label>
  ${fieldErrors(errors, 'username')}
  <div class="row">
    <label>Amount <input name="amount" inputmode="decimal" required placeholder="5.00" value="${f.amount}"></label>
    <label>Currency <select name="currency">${INPUT_CURRENCIES.map((c) => html`<option ${c === f.currency ? 'selected' : ''}>${c}</option>`)}</select></label>
  </div>
  ${fieldErrors(errors, 'amount')}${fieldErrors(errors, 'currency')}
  <label for="donor-message">Message <small>(optional)</small></label>
  <textarea id="donor-message" name="message" rows="4" maxlength="${DONATION_LIMITS.message}" data-counter="message-count">${f.message}</textarea>
  <p class="counter"><span id="message-count">${f.message.length}</span> / ${DONATION_LIMITS.message} characters</p>
  ${fieldErrors(errors, 'message')}
  ${pollBlock(poll, f, errors)}
  <div class="payment${provider.isTest ? ' payment-test' : ''}">
    <strong>Payment: ${provider.label}</strong>
    <p>${provider.description}</p>
  </div>
  <button type="submit">Donate</button>
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

  const findStreamer = async (code: string): Promise<UserRow | null> => {
    const user = await userByCode(db, code.toLowerCase());
    return user && user.is_active ? user : null;
  };
  const notFound = (reply: FastifyReply) =>
    reply.status(404).type(HTML).send(errorPage(404, 'There is no streamer with this donation link.'));

  const render = async (request: FastifyRequest, reply: FastifyReply, streamer: UserRow, f: DonorForm, errors?: Record<string, string[]>, status = 200) => {
    const [goals, poll] = await Promise.all([listGoals(db, streamer.id, { state: 'active' }), getActivePoll(db, streamer.id)]);
    const csrf = reply.generateCsrf();
    const body = donorPage(streamer, csrf, provider, goals, poll, f, errors);
    return reply
      .status(status)
      .header('cache-control', 'no-store')
      .type(HTML)
      .send(page({ title: `Donate to ${streamer.name}`, user: request.sessionUser, csrf, body, head }));
  };

  app.get<{ Params: { code: string } }>('/r/:code', async (request, reply) => {
    const streamer = await findStreamer(request.params.code);
    if (!streamer) return notFound(reply);
    return render(request, reply, streamer, { username: '', amount: '', currency: isInputCurrency(streamer.currency) ? streamer.currency : 'USD', message: '', poll_option: '', poll_option_title: '' });
  });

  app.post<{ Params: { code: string } }>(
    '/r/:code',
    { preHandler: app.csrfProtection, config: { rateLimit: { max: 30, timeWindow: 60_000, skipOnError: true } } },
    async (request, reply) => {
      const streamer = await findStreamer(request.params.code);
      if (!streamer) return notFound(reply);
      const f = readForm(request.body);
      const errors = formErrors(f);
      if (Object.keys(errors).length) return render(request, reply, streamer, f, errors, 422);
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
        if (err instanceof NotFoundError) return notFound(reply);
        if (!(err instanceof ValidationError)) throw err;
        const shown: Record<string, string[]> = {};
        for (const [field, messages] of Object.entries(err.errors)) {
          const target = field === 'poll_option_id' || field === 'poll_option_title' ? 'poll' : ['username', 'amount', 'currency', 'message'].includes(field) ? field : 'form';
          (shown[target] ??= []).push(...messages);
        }
        return render(request, reply, streamer, f, shown, 422);
      }
      return reply.redirect(`/r/${streamer.code}/thanks/${donationId}?t=${thanksTag(tagKey, streamer.id, donationId)}`, 303);
    },
  );

  app.get<{ Params: { code: string; id: string }; Querystring: { t?: string } }>('/r/:code/thanks/:id', async (request, reply) => {
    const streamer = await findStreamer(request.params.code);
    const id = /^[1-9]\d{0,14}$/.test(request.params.id) ? Number(request.params.id) : 0;
    const tag = typeof request.query.t === 'string' ? request.query.t : '';
    if (!streamer || !id || !safeEqual(tag, thanksTag(tagKey, streamer.id, id))) return notFound(reply);
    const donation = await donationOf(db, streamer.id, id);
    if (!donation) return notFound(reply);
    const body = html`<section class="card narrow donor-thanks">
<h1>Thank you!</h1>
<p>Your donation of <strong>${toMajor(donation.amount).toFixed(2)} ${donation.currency}</strong> to <strong>${streamer.name}</strong> was received${donation.payin_system ? html` (${donation.payin_system})` : ''}.</p>
${provider.isTest ? html`<p class="payment payment-test">Recorded by the test / self-hosted payment provider: no money was charged.</p>` : ''}
<dl class="facts"><dt>Name</dt><dd>${donation.username}</dd>${donation.message ? html`<dt>Message</dt><dd class="donor-message-text">${donation.message}</dd>` : ''}</dl>
<p><a href="/r/${streamer.code}">Back to ${streamer.name}'s donation page</a></p>
</section>`;
    return reply
      .header('cache-control', 'no-store')
      .header('referrer-policy', 'no-referrer')
      .type(HTML)
      .send(page({ title: 'Thank you', user: request.sessionUser, csrf: reply.generateCsrf(), body, head }));
  });
}
