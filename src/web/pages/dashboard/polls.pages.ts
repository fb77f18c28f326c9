import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { OUTPUT_CURRENCIES } from '../../../domain/currency.js';
import { ConflictError, msg, ValidationError } from '../../../domain/errors.js';
import { POLL_LIMITS } from '../../../domain/poll.js';
import { pollChannel } from '../../../modules/outbox/channels.js';
import { closePoll, createPoll, listPolls, updatePoll } from '../../../modules/polls/polls.service.js';
import type { PollDetails } from '../../../modules/polls/polls.resource.js';
import { redirectWithFlash, takeFlash } from '../../flash.js';
import { html, type Html } from '../../html.js';
import { fieldErrors } from '../../layout.js';
import type { Translator } from '../../../i18n/translator.js';
import { pageTranslator } from '../../i18n.js';
import { csrfField, field, idParam, notice, sendPage, type FieldErrors } from './common.js';
import { REALTIME_HEAD, realtimeConfig } from './realtime.js';
import { errorText, fieldErrorTexts } from '../../error-text.js';

interface PollForm {
  title: string;
  type: string;
  options: string;
  allow_user_options: boolean;
  currency: string;
}

interface Flash {
  notice?: string;
  error?: string;
  errors?: FieldErrors;
  form?: PollForm;
  /** Options typed into the add-options form. */
  addOptions?: string;
}

const lines = (text: string) => text.split(/\r?\n/).map((l) => l.trim()).filter(Boolean);

function valueText(t: Translator, p: PollDetails, value: number): string {
  return p.type === 'sum' ? t.moneyMajor(value, p.currency) : t.t('js.poll_votes', { count: value });
}

const percentText = (t: Translator, value: number) => t.percent(value);

/** Options with their standing; dashboard.js redraws this list from `$polls:` publications. */
export function pollStandings(t: Translator, p: PollDetails): Html {
  return html`<ol class="options">${p.options.map(
    (o) => html`<li class="option${o.is_winner ? ' winner' : ''}" data-option-id="${o.id}">
  <div class="option-head"><span class="option-title">${o.title}</span><span class="option-value">${valueText(t, p, o.amount_value)} · ${percentText(t, o.amount_percent)}</span></div>
  <progress max="100" value="${o.amount_percent}">${percentText(t, o.amount_percent)}</progress>
</li>`,
  )}</ol>`;
}

function activePoll(t: Translator, p: PollDetails, csrf: string, flash: Flash): Html {
  return html`<article class="item poll" data-poll-id="${p.id}" data-type="${p.type}" data-currency="${p.currency}">
  <div class="item-head"><h3>${p.title}</h3><span class="tag state">${t.t('js.state.running')}</span></div>
  <p class="meta">${p.type === 'sum' ? t.t('polls.winner_sum', { currency: p.currency }) : t.t('polls.winner_count')}${p.allow_user_options ? ` · ${t.t('polls.donors_add')}` : ''}</p>
  ${pollStandings(t, p)}
  <details class="edit"${flash.addOptions !== undefined ? html` open` : ''}><summary>${t.t('polls.add_options')}</summary>
  <form method="post" action="/dashboard/polls/${p.id}/options">
    ${csrfField(csrf)}
    <label>${t.t('polls.new_options')} <small>${t.t('polls.one_per_line')}</small><textarea name="add_options" rows="3">${flash.addOptions ?? ''}</textarea></label>
    ${fieldErrors(flash.addOptions !== undefined ? flash.errors : undefined, 'add_options')}
    <button type="submit">${t.t('polls.add')}</button>
  </form></details>
  <form method="post" action="/dashboard/polls/${p.id}/close" class="inline close-form" data-confirm="${t.t('polls.confirm_close')}">${csrfField(csrf)}<button type="submit" class="danger">${t.t('polls.close')}</button></form>
</article>`;
}

function finishedPoll(t: Translator, p: PollDetails): Html {
  const winners = p.options.filter((o) => o.is_winner).map((o) => o.title);
  return html`<tr>
  <td data-label="${t.t('polls.col.poll')}">${p.title}</td>
  <td data-label="${t.t('polls.col.winner')}">${winners.length ? winners.join(', ') : '—'}</td>
  <td data-label="${t.t('polls.col.ended')}">${p.ended_at ? html`<time datetime="${p.ended_at.replace(' ', 'T')}Z" data-local>${p.ended_at} UTC</time>` : '—'}</td>
</tr>`;
}

async function render(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, flash: Flash = {}, status = 200) {
  const t = pageTranslator(request);
  const user = request.sessionUser!;
  const polls = await listPolls(app.ctx.db, user.id, { state: 'all', limit: 30 });
  const active = polls.find((p) => p.is_active);
  const finished = polls.filter((p) => !p.is_active);
  const csrf = reply.generateCsrf();
  const form = flash.form;
  const e = flash.addOptions === undefined ? flash.errors : undefined;
  const body = html`<section class="card">
<h1>${t.t('polls.title')} <span class="live" id="live-status" data-state="connecting">${t.t('js.live.connecting')}</span></h1>
${notice(flash.notice)}
${flash.error ? html`<p class="error" role="alert">${flash.error}</p>` : ''}
<p class="hint">${t.t('polls.hint')}</p>
<div id="active-poll">${active ? activePoll(t, active, csrf, flash) : ''}</div>
${active ? '' : html`<p class="empty">${t.t('polls.none_running')}</p>`}
</section>
${active
  ? ''
  : html`<section class="card">
<h2>${t.t('polls.start_title')}</h2>
<form method="post" action="/dashboard/polls">
  ${csrfField(csrf)}
  <label>${t.t('polls.question')} <input name="title" required maxlength="${POLL_LIMITS.title}" value="${form?.title ?? ''}" placeholder="${t.t('polls.question_placeholder')}"></label>
  ${fieldErrors(e, 'title')}
  <label>${t.t('polls.options')} <small>${t.t('polls.options_hint', { min: POLL_LIMITS.minOptions, max: POLL_LIMITS.maxOptions })}</small><textarea name="options" rows="4" required>${form?.options ?? ''}</textarea></label>
  ${fieldErrors(e, 'options')}
  <div class="row">
    <label>${t.t('polls.col.winner')} <select name="type">
      <option value="count"${form?.type !== 'sum' ? html` selected` : ''}>${t.t('polls.type_count')}</option>
      <option value="sum"${form?.type === 'sum' ? html` selected` : ''}>${t.t('polls.type_sum')}</option>
    </select></label>
    <label>${t.t('polls.sum_currency')} <select name="currency">${OUTPUT_CURRENCIES.map((c) => html`<option${c === (form?.currency || user.currency) ? html` selected` : ''}>${c}</option>`)}</select></label>
  </div>
  ${fieldErrors(e, 'type')}${fieldErrors(e, 'currency')}
  <label class="check"><input type="checkbox" name="allow_user_options" value="1"${form?.allow_user_options ? html` checked` : ''}> ${t.t('polls.allow_user_options')}</label>
  ${fieldErrors(e, 'allow_user_options')}
  <button type="submit">${t.t('polls.start')}</button>
</form>
</section>`}
${finished.length
  ? html`<section class="card"><h2>${t.t('polls.finished')}</h2>
<table class="list"><thead><tr><th>${t.t('polls.col.poll')}</th><th>${t.t('polls.col.winner')}</th><th>${t.t('polls.col.ended')}</th></tr></thead><tbody>${finished.map((p) => finishedPoll(t, p))}</tbody></table></section>`
  : ''}`;
  return sendPage(request, reply, csrf, {
    title: t.t('polls.title'),
    body,
    status,
    head: REALTIME_HEAD,
    data: { page: 'polls', csrf, realtime: await realtimeConfig(app, user.id, [pollChannel(user.id)]) },
  });
}

/** Polls through polls.service: start, add options, close, with live results on `$polls:poll_<id>`. */
export async function pollsPages(app: FastifyInstance): Promise<void> {
  app.get('/dashboard/polls', (request, reply) => render(app, request, reply, takeFlash(request, reply)));

  app.post('/dashboard/polls', async (request, reply) => {
    const b = request.body;
    const form: PollForm = { title: field(b, 'title'), type: field(b, 'type'), options: field(b, 'options'), allow_user_options: field(b, 'allow_user_options') === '1', currency: field(b, 'currency') };
    try {
      const poll = await createPoll(app.ctx.db, request.sessionUser!.id, {
        title: form.title,
        type: form.type || undefined,
        options: lines(form.options),
        allowUserOptions: form.allow_user_options ? 1 : 0,
        currency: form.currency || undefined,
      });
      return redirectWithFlash(request, reply, '/dashboard/polls', { notice: pageTranslator(request).t('polls.notice.started', { title: poll.title }) });
    } catch (err) {
      if (err instanceof ValidationError) return render(app, request, reply, { errors: fieldErrorTexts(pageTranslator(request), err), form }, 422);
      if (err instanceof ConflictError) return render(app, request, reply, { error: errorText(pageTranslator(request), err), form }, 409);
      throw err;
    }
  });

  app.post<{ Params: { id: string } }>('/dashboard/polls/:id/options', async (request, reply) => {
    const typed = field(request.body, 'add_options');
    try {
      if (!lines(typed).length) throw ValidationError.field('add_options', msg('err.poll.no_options_typed'));
      await updatePoll(app.ctx.db, request.sessionUser!.id, idParam(request.params.id), { addOptions: lines(typed) });
      return redirectWithFlash(request, reply, '/dashboard/polls', { notice: pageTranslator(request).t('polls.notice.options_added') });
    } catch (err) {
      if (err instanceof ValidationError) return render(app, request, reply, { errors: fieldErrorTexts(pageTranslator(request), err), addOptions: typed }, 422);
      if (err instanceof ConflictError) return render(app, request, reply, { error: errorText(pageTranslator(request), err) }, 409);
      throw err;
    }
  });

  app.post<{ Params: { id: string } }>('/dashboard/polls/:id/close', async (request, reply) => {
    const poll = await closePoll(app.ctx.db, idParam(request.params.id), { userId: request.sessionUser!.id });
    return redirectWithFlash(request, reply, '/dashboard/polls', { notice: pageTranslator(request).t('polls.notice.closed', { title: poll.title }) });
  });
}
