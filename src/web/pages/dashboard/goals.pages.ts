import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { OUTPUT_CURRENCIES } from '../../../domain/currency.js';
import { formatDateTime } from '../../../domain/datetime.js';
import { ConflictError, ValidationError } from '../../../domain/errors.js';
import { GOAL_LIMITS, parseDateTime } from '../../../domain/goal.js';
import type { GoalDetails } from '../../../modules/goals/goals.resource.js';
import { closeGoal, createGoal, listGoals, updateGoal } from '../../../modules/goals/goals.service.js';
import { goalChannel } from '../../../modules/outbox/channels.js';
import { redirectWithFlash, takeFlash } from '../../flash.js';
import { html, type Html } from '../../html.js';
import { fieldErrors } from '../../layout.js';
import type { Translator } from '../../../i18n/translator.js';
import { pageTranslator } from '../../i18n.js';
import { csrfField, field, idParam, notice, sendPage, type FieldErrors } from './common.js';
import { amountValue, dateTimeInput, dateTimeWithOffset } from './forms.js';
import { REALTIME_HEAD, realtimeConfig } from './realtime.js';
import { errorText, fieldErrorTexts } from '../../error-text.js';

interface GoalForm {
  title: string;
  goal_amount: string;
  start_amount: string;
  currency?: string;
  /** As typed, with the browser's offset applied (ISO 8601), or ''. */
  expires_at: string;
}

interface Flash {
  notice?: string;
  error?: string;
  errors?: FieldErrors;
  /** The create form (goalId 0) or the edit form of one goal, as typed. */
  form?: GoalForm & { goalId: number };
}

/** A typed date-time shown again after an error, in UTC like every value the page renders. */
function utcOf(typed: string): string {
  const ms = typed ? parseDateTime(typed) : null;
  return ms === null ? typed : formatDateTime(ms);
}

function readForm(body: unknown): GoalForm {
  return {
    title: field(body, 'title'),
    goal_amount: field(body, 'goal_amount'),
    start_amount: field(body, 'start_amount'),
    currency: field(body, 'currency'),
    expires_at: dateTimeWithOffset(body, 'expires_at'),
  };
}

function percent(g: GoalDetails): number {
  return g.goal_amount > 0 ? Math.min(100, Math.floor((g.raised_amount / g.goal_amount) * 100)) : 0;
}

/** The progress block; dashboard.js updates the same elements from `$goals:` publications. */
export function goalProgress(t: Translator, g: GoalDetails): Html {
  const text = t.t('js.goal_progress', { raised: t.moneyMajor(g.raised_amount, g.currency), goal: t.moneyMajor(g.goal_amount, g.currency), percent: t.percent(percent(g)) });
  return html`<div class="progress-line">${text}</div>
<progress max="${g.goal_amount}" value="${Math.min(g.raised_amount, g.goal_amount)}">${t.percent(percent(g))}</progress>`;
}

function activeGoal(t: Translator, g: GoalDetails, csrf: string, flash: Flash): Html {
  const editing = flash.form?.goalId === g.id ? flash.form : undefined;
  const errors = editing ? flash.errors : undefined;
  return html`<article class="item goal" data-goal-id="${g.id}">
  <div class="item-head"><h3 class="goal-title">${g.title}</h3><span class="tag state">${t.t('js.state.running')}</span></div>
  ${goalProgress(t, g)}
  <p class="meta">${t.t('goals.started')} <time datetime="${g.started_at.replace(' ', 'T')}Z" data-local>${g.started_at} UTC</time>${g.expires_at ? html` · ${t.t('goals.ends')} <time class="ends" datetime="${g.expires_at.replace(' ', 'T')}Z" data-local>${g.expires_at} UTC</time>` : ''}</p>
  <details class="edit"${editing ? html` open` : ''}><summary>${t.t('goals.edit')}</summary>
  <form method="post" action="/dashboard/goals/${g.id}">
    ${csrfField(csrf)}
    <label>${t.t('goals.form.title')} <input name="title" required maxlength="${GOAL_LIMITS.title}" value="${editing?.title ?? g.title}"></label>
    ${fieldErrors(errors, 'title')}
    <div class="row">
      <label>${t.t('goals.form.goal_amount')} <small>(${g.currency})</small><input name="goal_amount" inputmode="decimal" required value="${editing?.goal_amount ?? amountValue(g.goal_amount)}"></label>
      <label>${t.t('goals.form.start_amount')} <input name="start_amount" inputmode="decimal" value="${editing?.start_amount ?? amountValue(g.start_amount)}"></label>
    </div>
    ${fieldErrors(errors, 'goal_amount')}${fieldErrors(errors, 'start_amount')}
    ${dateTimeInput('expires_at', t.t('goals.form.ends_at'), editing ? utcOf(editing.expires_at) : g.expires_at, t.t('goals.form.no_end'))}
    ${fieldErrors(errors, 'expires_at')}
    <button type="submit">${t.t('goals.form.save')}</button>
  </form></details>
  <form method="post" action="/dashboard/goals/${g.id}/close" class="inline close-form" data-confirm="${t.t('goals.confirm_close')}">${csrfField(csrf)}<button type="submit" class="danger">${t.t('goals.close')}</button></form>
</article>`;
}

function finishedGoal(t: Translator, g: GoalDetails): Html {
  return html`<tr>
  <td data-label="${t.t('goals.col.title')}">${g.title}</td>
  <td data-label="${t.t('goals.col.raised')}" class="num">${t.moneyMajor(g.raised_amount, g.currency)} / ${t.moneyMajor(g.goal_amount, g.currency)}</td>
  <td data-label="${t.t('goals.col.ended')}">${g.ended_at ? html`<time datetime="${g.ended_at.replace(' ', 'T')}Z" data-local>${g.ended_at} UTC</time>` : '—'}</td>
</tr>`;
}

async function render(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, flash: Flash = {}, status = 200) {
  const t = pageTranslator(request);
  const user = request.sessionUser!;
  const goals = await listGoals(app.ctx.db, user.id, { state: 'all', limit: 100 });
  const active = goals.filter((g) => g.is_active);
  const finished = goals.filter((g) => !g.is_active).slice(0, 30);
  const csrf = reply.generateCsrf();
  const creating = flash.form?.goalId === 0 ? flash.form : undefined;
  const e = creating ? flash.errors : undefined;
  const body = html`<section class="card">
<h1>${t.t('goals.title')} <span class="live" id="live-status" data-state="connecting">${t.t('js.live.connecting')}</span></h1>
${notice(flash.notice)}
${flash.error ? html`<p class="error" role="alert">${flash.error}</p>` : ''}
<p class="hint">${t.t('goals.hint')}</p>
<div id="active-goals">${active.length ? active.map((g) => activeGoal(t, g, csrf, flash)) : ''}</div>
<p class="empty" id="goals-empty"${active.length ? html` hidden` : ''}>${t.t('goals.none_running')}</p>
</section>
<section class="card">
<h2>${t.t('goals.start_title')}</h2>
<form method="post" action="/dashboard/goals">
  ${csrfField(csrf)}
  <label>${t.t('goals.form.title')} <input name="title" required maxlength="${GOAL_LIMITS.title}" value="${creating?.title ?? ''}" placeholder="${t.t('goals.form.title_placeholder')}"></label>
  ${fieldErrors(e, 'title')}
  <div class="row">
    <label>${t.t('goals.form.goal_amount')} <input name="goal_amount" inputmode="decimal" required value="${creating?.goal_amount ?? ''}" placeholder="${t.decimal(500)}"></label>
    <label>${t.t('goals.form.start_amount')} <small>${t.t('donor.optional')}</small><input name="start_amount" inputmode="decimal" value="${creating?.start_amount ?? ''}" placeholder="${t.decimal(0)}"></label>
    <label>${t.t('donor.currency')} <select name="currency">${OUTPUT_CURRENCIES.map((c) => html`<option${c === (creating?.currency || user.currency) ? html` selected` : ''}>${c}</option>`)}</select></label>
  </div>
  ${fieldErrors(e, 'goal_amount')}${fieldErrors(e, 'start_amount')}${fieldErrors(e, 'currency')}
  ${dateTimeInput('expires_at', t.t('goals.form.ends_at'), creating ? utcOf(creating.expires_at) : '', t.t('goals.form.optional'))}
  ${fieldErrors(e, 'expires_at')}
  <button type="submit">${t.t('goals.start')}</button>
</form>
</section>
${finished.length
  ? html`<section class="card"><h2>${t.t('goals.finished')}</h2>
<table class="list"><thead><tr><th>${t.t('goals.col.title')}</th><th>${t.t('goals.col.raised')}</th><th>${t.t('goals.col.ended')}</th></tr></thead><tbody>${finished.map((g) => finishedGoal(t, g))}</tbody></table></section>`
  : ''}`;
  return sendPage(request, reply, csrf, {
    title: t.t('goals.title'),
    body,
    status,
    head: REALTIME_HEAD,
    data: { page: 'goals', csrf, realtime: await realtimeConfig(app, user.id, [goalChannel(user.id)]) },
  });
}

/** Goals through goals.service: create, edit and close, with live progress on `$goals:goal_<id>`. */
export async function goalsPages(app: FastifyInstance): Promise<void> {
  app.get('/dashboard/goals', (request, reply) => render(app, request, reply, takeFlash(request, reply)));

  app.post('/dashboard/goals', async (request, reply) => {
    const form = readForm(request.body);
    try {
      const goal = await createGoal(app.ctx.db, request.sessionUser!.id, {
        title: form.title,
        goalAmount: form.goal_amount,
        startAmount: form.start_amount,
        currency: form.currency,
        expiresAt: form.expires_at,
      });
      return redirectWithFlash(request, reply, '/dashboard/goals', { notice: pageTranslator(request).t('goals.notice.started', { title: goal.title }) });
    } catch (err) {
      if (err instanceof ValidationError) return render(app, request, reply, { errors: fieldErrorTexts(pageTranslator(request), err), form: { ...form, goalId: 0 } }, 422);
      if (err instanceof ConflictError) return render(app, request, reply, { error: errorText(pageTranslator(request), err), form: { ...form, goalId: 0 } }, 409);
      throw err;
    }
  });

  app.post<{ Params: { id: string } }>('/dashboard/goals/:id', async (request, reply) => {
    const goalId = idParam(request.params.id);
    const form = readForm(request.body);
    try {
      await updateGoal(app.ctx.db, request.sessionUser!.id, goalId, {
        title: form.title,
        goalAmount: form.goal_amount,
        startAmount: form.start_amount || '0',
        expiresAt: form.expires_at,
      });
      return redirectWithFlash(request, reply, '/dashboard/goals', { notice: pageTranslator(request).t('goals.notice.saved') });
    } catch (err) {
      if (err instanceof ValidationError) return render(app, request, reply, { errors: fieldErrorTexts(pageTranslator(request), err), form: { ...form, goalId } }, 422);
      if (err instanceof ConflictError) return render(app, request, reply, { error: errorText(pageTranslator(request), err) }, 409);
      throw err;
    }
  });

  app.post<{ Params: { id: string } }>('/dashboard/goals/:id/close', async (request, reply) => {
    const goal = await closeGoal(app.ctx.db, idParam(request.params.id), { userId: request.sessionUser!.id });
    return redirectWithFlash(request, reply, '/dashboard/goals', { notice: pageTranslator(request).t('goals.notice.closed', { title: goal.title }) });
  });
}
