import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { OUTPUT_CURRENCIES } from '../../../domain/currency.js';
import { formatDateTime } from '../../../domain/datetime.js';
import { ConflictError, ValidationError } from '../../../domain/errors.js';
import { GOAL_LIMITS, parseDateTime } from '../../../domain/goal.js';
import type { GoalDetails } from '../../../modules/goals/goals.resource.js';
import { closeGoal, createGoal, listGoals, updateGoal } from '../../../modules/goals/goals.service.js';
import { goalChannel } from '../../../modules/outbox/channels.js';
import { html, type Html } from '../../html.js';
import { fieldErrors } from '../../layout.js';
import { requireUser } from '../../session.js';
import { csrfField, field, idParam, notice, sendPage, type FieldErrors } from './common.js';
import { amountValue, dateTimeInput, dateTimeWithOffset } from './forms.js';
import { REALTIME_HEAD, realtimeConfig } from './realtime.js';

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
export function goalProgress(g: GoalDetails): Html {
  return html`<div class="progress-line"><span class="raised">${amountValue(g.raised_amount)}</span> of <span class="target">${amountValue(g.goal_amount)}</span> ${g.currency} · <span class="pct">${percent(g)}</span>%</div>
<progress max="${g.goal_amount}" value="${Math.min(g.raised_amount, g.goal_amount)}">${percent(g)}%</progress>`;
}

function activeGoal(g: GoalDetails, csrf: string, flash: Flash): Html {
  const editing = flash.form?.goalId === g.id ? flash.form : undefined;
  const errors = editing ? flash.errors : undefined;
  return html`<article class="item goal" data-goal-id="${g.id}">
  <div class="item-head"><h3 class="goal-title">${g.title}</h3><span class="tag state">running</span></div>
  ${goalProgress(g)}
  <p class="meta">Started <time datetime="${g.started_at.replace(' ', 'T')}Z" data-local>${g.started_at} UTC</time>${g.expires_at ? html` · ends <time class="ends" datetime="${g.expires_at.replace(' ', 'T')}Z" data-local>${g.expires_at} UTC</time>` : ''}</p>
  <details class="edit"${editing ? html` open` : ''}><summary>Edit</summary>
  <form method="post" action="/dashboard/goals/${g.id}">
    ${csrfField(csrf)}
    <label>Title <input name="title" required maxlength="${GOAL_LIMITS.title}" value="${editing?.title ?? g.title}"></label>
    ${fieldErrors(errors, 'title')}
    <div class="row">
      <label>Goal amount <small>(${g.currency})</small><input name="goal_amount" inputmode="decimal" required value="${editing?.goal_amount ?? amountValue(g.goal_amount)}"></label>
      <label>Start amount <input name="start_amount" inputmode="decimal" value="${editing?.start_amount ?? amountValue(g.start_amount)}"></label>
    </div>
    ${fieldErrors(errors, 'goal_amount')}${fieldErrors(errors, 'start_amount')}
    ${dateTimeInput('expires_at', 'Ends at', editing ? utcOf(editing.expires_at) : g.expires_at, 'empty for no end')}
    ${fieldErrors(errors, 'expires_at')}
    <button type="submit">Save goal</button>
  </form></details>
  <form method="post" action="/dashboard/goals/${g.id}/close" class="inline close-form" data-confirm="Close this goal now? A closed goal cannot be reopened.">${csrfField(csrf)}<button type="submit" class="danger">Close goal</button></form>
</article>`;
}

function finishedGoal(g: GoalDetails): Html {
  return html`<tr>
  <td data-label="Title">${g.title}</td>
  <td data-label="Raised" class="num">${amountValue(g.raised_amount)} / ${amountValue(g.goal_amount)} ${g.currency}</td>
  <td data-label="Ended">${g.ended_at ? html`<time datetime="${g.ended_at.replace(' ', 'T')}Z" data-local>${g.ended_at} UTC</time>` : '—'}</td>
</tr>`;
}

async function render(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, flash: Flash = {}, status = 200) {
  const user = request.sessionUser!;
  const goals = await listGoals(app.ctx.db, user.id, { state: 'all', limit: 100 });
  const active = goals.filter((g) => g.is_active);
  const finished = goals.filter((g) => !g.is_active).slice(0, 30);
  const csrf = reply.generateCsrf();
  const creating = flash.form?.goalId === 0 ? flash.form : undefined;
  const e = creating ? flash.errors : undefined;
  const body = html`<section class="card">
<h1>Donation goals <span class="live" id="live-status" data-state="connecting">connecting…</span></h1>
${notice(flash.notice)}
${flash.error ? html`<p class="error" role="alert">${flash.error}</p>` : ''}
<p class="hint">Every donation raises every running goal, converted into the goal’s currency. Progress updates live.</p>
<div id="active-goals">${active.length ? active.map((g) => activeGoal(g, csrf, flash)) : ''}</div>
<p class="empty" id="goals-empty"${active.length ? html` hidden` : ''}>No goal is running.</p>
</section>
<section class="card">
<h2>Start a goal</h2>
<form method="post" action="/dashboard/goals">
  ${csrfField(csrf)}
  <label>Title <input name="title" required maxlength="${GOAL_LIMITS.title}" value="${creating?.title ?? ''}" placeholder="New microphone"></label>
  ${fieldErrors(e, 'title')}
  <div class="row">
    <label>Goal amount <input name="goal_amount" inputmode="decimal" required value="${creating?.goal_amount ?? ''}" placeholder="500.00"></label>
    <label>Start amount <small>(optional)</small><input name="start_amount" inputmode="decimal" value="${creating?.start_amount ?? ''}" placeholder="0.00"></label>
    <label>Currency <select name="currency">${OUTPUT_CURRENCIES.map((c) => html`<option${c === (creating?.currency || user.currency) ? html` selected` : ''}>${c}</option>`)}</select></label>
  </div>
  ${fieldErrors(e, 'goal_amount')}${fieldErrors(e, 'start_amount')}${fieldErrors(e, 'currency')}
  ${dateTimeInput('expires_at', 'Ends at', creating ? utcOf(creating.expires_at) : '')}
  ${fieldErrors(e, 'expires_at')}
  <button type="submit">Start goal</button>
</form>
</section>
${finished.length
  ? html`<section class="card"><h2>Finished goals</h2>
<table class="list"><thead><tr><th>Title</th><th>Raised</th><th>Ended</th></tr></thead><tbody>${finished.map(finishedGoal)}</tbody></table></section>`
  : ''}`;
  return sendPage(request, reply, csrf, {
    title: 'Goals',
    body,
    status,
    head: REALTIME_HEAD,
    data: { page: 'goals', csrf, realtime: await realtimeConfig(app, user.id, [goalChannel(user.id)]) },
  });
}

/** Goals through goals.service: create, edit and close, with live progress on `$goals:goal_<id>`. */
export async function goalsPages(app: FastifyInstance): Promise<void> {
  app.get('/dashboard/goals', { preHandler: requireUser }, (request, reply) => render(app, request, reply));

  app.post('/dashboard/goals', { preHandler: [requireUser, app.csrfProtection] }, async (request, reply) => {
    const form = readForm(request.body);
    try {
      const goal = await createGoal(app.ctx.db, request.sessionUser!.id, {
        title: form.title,
        goalAmount: form.goal_amount,
        startAmount: form.start_amount,
        currency: form.currency,
        expiresAt: form.expires_at,
      });
      return render(app, request, reply, { notice: `Goal “${goal.title}” started.` }, 201);
    } catch (err) {
      if (err instanceof ValidationError) return render(app, request, reply, { errors: err.errors, form: { ...form, goalId: 0 } }, 422);
      if (err instanceof ConflictError) return render(app, request, reply, { error: err.message, form: { ...form, goalId: 0 } }, 409);
      throw err;
    }
  });

  app.post<{ Params: { id: string } }>('/dashboard/goals/:id', { preHandler: [requireUser, app.csrfProtection] }, async (request, reply) => {
    const goalId = idParam(request.params.id);
    const form = readForm(request.body);
    try {
      await updateGoal(app.ctx.db, request.sessionUser!.id, goalId, {
        title: form.title,
        goalAmount: form.goal_amount,
        startAmount: form.start_amount || '0',
        expiresAt: form.expires_at,
      });
      return render(app, request, reply, { notice: 'Goal saved.' });
    } catch (err) {
      if (err instanceof ValidationError) return render(app, request, reply, { errors: err.errors, form: { ...form, goalId } }, 422);
      if (err instanceof ConflictError) return render(app, request, reply, { error: err.message }, 409);
      throw err;
    }
  });

  app.post<{ Params: { id: string } }>('/dashboard/goals/:id/close', { preHandler: [requireUser, app.csrfProtection] }, async (request, reply) => {
    const goal = await closeGoal(app.ctx.db, idParam(request.params.id), { userId: request.sessionUser!.id });
    return render(app, request, reply, { notice: `Goal “${goal.title}” closed.` });
  });
}
