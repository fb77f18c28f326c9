import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { OUTPUT_CURRENCIES } from '../../../domain/currency.js';
import { ConflictError, ValidationError } from '../../../domain/errors.js';
import { POLL_LIMITS } from '../../../domain/poll.js';
import { pollChannel } from '../../../modules/outbox/channels.js';
import { closePoll, createPoll, listPolls, updatePoll } from '../../../modules/polls/polls.service.js';
import type { PollDetails } from '../../../modules/polls/polls.resource.js';
import { html, type Html } from '../../html.js';
import { fieldErrors } from '../../layout.js';
import { requireUser } from '../../session.js';
import { csrfField, field, idParam, notice, sendPage, type FieldErrors } from './common.js';
import { REALTIME_HEAD, realtimeConfig } from './realtime.js';

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

function valueText(p: PollDetails, value: number): string {
  return p.type === 'sum' ? `${value.toFixed(2)} ${p.currency}` : `${value} ${value === 1 ? 'vote' : 'votes'}`;
}

/** Options with their standing; dashboard.js redraws this list from `$polls:` publications. */
function results(p: PollDetails): Html {
  return html`<ol class="options">${p.options.map(
    (o) => html`<li class="option${o.is_winner ? ' winner' : ''}" data-option-id="${o.id}">
  <div class="option-head"><span class="option-title">${o.title}</span><span class="option-value">${valueText(p, o.amount_value)} · ${o.amount_percent}%</span></div>
  <progress max="100" value="${o.amount_percent}">${o.amount_percent}%</progress>
</li>`,
  )}</ol>`;
}

function activePoll(p: PollDetails, csrf: string, flash: Flash): Html {
  return html`<article class="item poll" data-poll-id="${p.id}" data-type="${p.type}" data-currency="${p.currency}">
  <div class="item-head"><h3>${p.title}</h3><span class="tag state">running</span></div>
  <p class="meta">${p.type === 'sum' ? `Winner: the largest sum (${p.currency})` : 'Winner: the most donations'}${p.allow_user_options ? ' · donors may add options' : ''}</p>
  ${results(p)}
  <details class="edit"${flash.addOptions !== undefined ? html` open` : ''}><summary>Add options</summary>
  <form method="post" action="/dashboard/polls/${p.id}/options">
    ${csrfField(csrf)}
    <label>New options <small>(one per line)</small><textarea name="add_options" rows="3">${flash.addOptions ?? ''}</textarea></label>
    ${fieldErrors(flash.addOptions !== undefined ? flash.errors : undefined, 'add_options')}
    <button type="submit">Add</button>
  </form></details>
  <form method="post" action="/dashboard/polls/${p.id}/close" class="inline close-form" data-confirm="Close this poll now? The current leaders win.">${csrfField(csrf)}<button type="submit" class="danger">Close poll</button></form>
</article>`;
}

function finishedPoll(p: PollDetails): Html {
  const winners = p.options.filter((o) => o.is_winner).map((o) => o.title);
  return html`<tr>
  <td data-label="Poll">${p.title}</td>
  <td data-label="Winner">${winners.length ? winners.join(', ') : '—'}</td>
  <td data-label="Ended">${p.ended_at ? html`<time datetime="${p.ended_at.replace(' ', 'T')}Z" data-local>${p.ended_at} UTC</time>` : '—'}</td>
</tr>`;
}

async function render(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, flash: Flash = {}, status = 200) {
  const user = request.sessionUser!;
  const polls = await listPolls(app.ctx.db, user.id, { state: 'all', limit: 30 });
  const active = polls.find((p) => p.is_active);
  const finished = polls.filter((p) => !p.is_active);
  const csrf = reply.generateCsrf();
  const form = flash.form;
  const e = flash.addOptions === undefined ? flash.errors : undefined;
  const body = html`<section class="card">
<h1>Polls <span class="live" id="live-status" data-state="connecting">connecting…</span></h1>
${notice(flash.notice)}
${flash.error ? html`<p class="error" role="alert">${flash.error}</p>` : ''}
<p class="hint">Donors vote with their donation on your donation page. One poll runs at a time; results update live.</p>
<div id="active-poll">${active ? activePoll(active, csrf, flash) : ''}</div>
${active ? '' : html`<p class="empty">No poll is running.</p>`}
</section>
${active
  ? ''
  : html`<section class="card">
<h2>Start a poll</h2>
<form method="post" action="/dashboard/polls">
  ${csrfField(csrf)}
  <label>Question <input name="title" required maxlength="${POLL_LIMITS.title}" value="${form?.title ?? ''}" placeholder="Which game next?"></label>
  ${fieldErrors(e, 'title')}
  <label>Options <small>(one per line, ${POLL_LIMITS.minOptions}–${POLL_LIMITS.maxOptions})</small><textarea name="options" rows="4" required>${form?.options ?? ''}</textarea></label>
  ${fieldErrors(e, 'options')}
  <div class="row">
    <label>Winner <select name="type">
      <option value="count"${form?.type !== 'sum' ? html` selected` : ''}>Most donations</option>
      <option value="sum"${form?.type === 'sum' ? html` selected` : ''}>Largest sum</option>
    </select></label>
    <label>Sum currency <select name="currency">${OUTPUT_CURRENCIES.map((c) => html`<option${c === (form?.currency || user.currency) ? html` selected` : ''}>${c}</option>`)}</select></label>
  </div>
  ${fieldErrors(e, 'type')}${fieldErrors(e, 'currency')}
  <label class="check"><input type="checkbox" name="allow_user_options" value="1"${form?.allow_user_options ? html` checked` : ''}> Donors may add their own options</label>
  ${fieldErrors(e, 'allow_user_options')}
  <button type="submit">Start poll</button>
</form>
</section>`}
${finished.length
  ? html`<section class="card"><h2>Finished polls</h2>
<table class="list"><thead><tr><th>Poll</th><th>Winner</th><th>Ended</th></tr></thead><tbody>${finished.map(finishedPoll)}</tbody></table></section>`
  : ''}`;
  return sendPage(request, reply, csrf, {
    title: 'Polls',
    body,
    status,
    head: REALTIME_HEAD,
    data: { page: 'polls', csrf, realtime: await realtimeConfig(app, user.id, [pollChannel(user.id)]) },
  });
}

/** Polls through polls.service: start, add options, close, with live results on `$polls:poll_<id>`. */
export async function pollsPages(app: FastifyInstance): Promise<void> {
  app.get('/dashboard/polls', { preHandler: requireUser }, (request, reply) => render(app, request, reply));

  app.post('/dashboard/polls', { preHandler: [requireUser, app.csrfProtection] }, async (request, reply) => {
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
      return render(app, request, reply, { notice: `Poll “${poll.title}” started.` }, 201);
    } catch (err) {
      if (err instanceof ValidationError) return render(app, request, reply, { errors: err.errors, form }, 422);
      if (err instanceof ConflictError) return render(app, request, reply, { error: err.message, form }, 409);
      throw err;
    }
  });

  app.post<{ Params: { id: string } }>('/dashboard/polls/:id/options', { preHandler: [requireUser, app.csrfProtection] }, async (request, reply) => {
    const typed = field(request.body, 'add_options');
    try {
      if (!lines(typed).length) throw ValidationError.field('add_options', 'Type at least one option.');
      await updatePoll(app.ctx.db, request.sessionUser!.id, idParam(request.params.id), { addOptions: lines(typed) });
      return render(app, request, reply, { notice: 'Options added.' });
    } catch (err) {
      if (err instanceof ValidationError) return render(app, request, reply, { errors: err.errors, addOptions: typed }, 422);
      if (err instanceof ConflictError) return render(app, request, reply, { error: err.message }, 409);
      throw err;
    }
  });

  app.post<{ Params: { id: string } }>('/dashboard/polls/:id/close', { preHandler: [requireUser, app.csrfProtection] }, async (request, reply) => {
    const poll = await closePoll(app.ctx.db, idParam(request.params.id), { userId: request.sessionUser!.id });
    return render(app, request, reply, { notice: `Poll “${poll.title}” closed.` });
  });
}
