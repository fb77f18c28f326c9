import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { OUTPUT_CURRENCIES } from '../../../domain/currency.js';
import { ForbiddenError, ValidationError } from '../../../domain/errors.js';
import { searchUsers } from '../../../modules/accounts/accounts.service.js';
import { setAccountActive } from '../../../modules/accounts/profile.service.js';
import { listCurrencyRates, setRate } from '../../../modules/currencies/currencies.service.js';
import { html } from '../../html.js';
import { fieldErrors } from '../../layout.js';
import { pageTranslator } from '../../i18n.js';
import { requireUser } from '../../session.js';
import { csrfField, field, idParam, notice, pageNumber, pager, requireAdmin, sendPage, time, type FieldErrors } from './common.js';

const PER_PAGE = 30;
const admin = { preHandler: [requireUser, requireAdmin] };

async function usersPage(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, flash: { notice?: string; error?: string } = {}, status = 200) {
  const me = request.sessionUser!;
  const search = field(request.query, 'q').trim().slice(0, 100);
  const current = pageNumber(request.query);
  const { users, total } = await searchUsers(app.ctx.db, search, current, PER_PAGE);
  const csrf = reply.generateCsrf();
  const query = new URLSearchParams(search ? { q: search } : {});
  const t = pageTranslator(request);
  const body = html`<section class="card">
<h1>Users</h1>
${notice(flash.notice)}
${flash.error ? html`<p class="error" role="alert">${flash.error}</p>` : ''}
<form method="get" action="/admin/users" class="filters" role="search">
  <label>Search <input name="q" value="${search}" placeholder="e-mail, name or code"></label>
  <div class="filter-actions"><button type="submit">Search</button>${search ? html` <a href="/admin/users">Clear</a>` : ''}</div>
</form>
<p class="hint">${total} ${total === 1 ? 'account' : 'accounts'}. A deactivated account cannot log in, its sessions end, its applications’ tokens are refused and it takes no donations until activated again.</p>
<table class="list"><thead><tr><th>Id</th><th>Name</th><th>E-mail</th><th>Role</th><th>Status</th><th>Since</th><th></th></tr></thead><tbody>
${users.map(
  (u) => html`<tr data-user-id="${u.id}">
  <td data-label="Id">${u.id}</td>
  <td data-label="Name">${u.name} <small><code>${u.code}</code></small></td>
  <td data-label="E-mail">${u.email}</td>
  <td data-label="Role">${u.role}</td>
  <td data-label="Status">${u.is_active ? 'active' : html`<strong class="inactive">deactivated</strong>`}</td>
  <td data-label="Since">${time(t, u.created_at)}</td>
  <td class="actions">${u.id === me.id
    ? html`<small>you</small>`
    : html`<form method="post" action="/admin/users/${u.id}/active" class="inline"${u.is_active ? html` data-confirm="Deactivate this account? The streamer is logged out and every token of theirs stops working."` : ''}>
    ${csrfField(csrf)}<input type="hidden" name="active" value="${u.is_active ? '0' : '1'}">
    <button type="submit"${u.is_active ? html` class="danger"` : ''}>${u.is_active ? 'Deactivate' : 'Activate'}</button></form>`}</td>
</tr>`,
)}
</tbody></table>
${pager(t, '/admin/users', query, current, Math.ceil(total / PER_PAGE))}
</section>`;
  return sendPage(request, reply, csrf, { title: 'Users', body, status });
}

async function ratesPage(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, flash: { notice?: string; errors?: FieldErrors; form?: Record<string, string> } = {}, status = 200) {
  const rates = await listCurrencyRates(app.ctx.db);
  const csrf = reply.generateCsrf();
  const form = flash.form ?? {};
  const body = html`<section class="card">
<h1>Currency rates</h1>
${notice(flash.notice)}
<p class="hint">Units of each currency one US dollar buys. Donations, goals, polls and merchandise revenue are converted with these rates at the moment they happen.</p>
<table class="list"><thead><tr><th>Currency</th><th>Per 1 USD</th><th>As of</th><th>Updated</th></tr></thead><tbody>
<tr><td data-label="Currency">USD</td><td data-label="Per 1 USD" class="num">1</td><td data-label="As of">base currency</td><td data-label="Updated">—</td></tr>
${rates
  .filter((r) => r.currency !== 'USD')
  .map(
    (r) => html`<tr><td data-label="Currency">${r.currency}</td><td data-label="Per 1 USD" class="num">${String(Number(r.per_usd))}</td><td data-label="As of">${r.as_of}</td><td data-label="Updated">${time(pageTranslator(request), Number(r.updated_at))}</td></tr>`,
  )}
</tbody></table>
</section>
<section class="card">
<h2>Set a rate</h2>
<form method="post" action="/admin/rates" novalidate>
  ${csrfField(csrf)}
  <div class="row">
    <label>Currency <select name="currency">${OUTPUT_CURRENCIES.filter((c) => c !== 'USD').map((c) => html`<option${c === form.currency ? html` selected` : ''}>${c}</option>`)}</select></label>
    <label>Units per 1 USD <input name="rate" inputmode="decimal" required value="${form.rate ?? ''}" placeholder="0.92"></label>
    <label>As of <small>(optional)</small><input type="date" name="as_of" value="${form.as_of ?? ''}"></label>
  </div>
  ${fieldErrors(flash.errors, 'currency')}${fieldErrors(flash.errors, 'rate')}${fieldErrors(flash.errors, 'as_of')}
  <button type="submit">Save rate</button>
</form>
</section>`;
  return sendPage(request, reply, csrf, { title: 'Currency rates', body, status });
}

/** /admin/users (list, deactivate/activate) and /admin/rates (list, set). Administrators only. */
export async function adminPages(app: FastifyInstance): Promise<void> {
  app.get('/admin', admin, async (_request, reply) => reply.redirect('/admin/users'));
  app.get('/admin/users', admin, (request, reply) => usersPage(app, request, reply));

  app.post<{ Params: { id: string } }>('/admin/users/:id/active', { preHandler: [requireUser, requireAdmin, app.csrfProtection] }, async (request, reply) => {
    const userId = idParam(request.params.id);
    const active = field(request.body, 'active') === '1';
    try {
      const user = await setAccountActive(app.ctx.db, app.ctx.revocations, request.sessionUser!.id, userId, active);
      return usersPage(app, request, reply, { notice: `${user.name} is ${active ? 'active again' : 'deactivated'}.` });
    } catch (err) {
      if (err instanceof ForbiddenError) return usersPage(app, request, reply, { error: err.message }, 403);
      throw err;
    }
  });

  app.get('/admin/rates', admin, (request, reply) => ratesPage(app, request, reply));

  app.post('/admin/rates', { preHandler: [requireUser, requireAdmin, app.csrfProtection] }, async (request, reply) => {
    const form = { currency: field(request.body, 'currency'), rate: field(request.body, 'rate').trim(), as_of: field(request.body, 'as_of').trim() };
    try {
      await setRate(app.ctx.db, form.currency, form.rate === '' ? Number.NaN : form.rate, form.as_of || undefined);
      return ratesPage(app, request, reply, { notice: `${form.currency.toUpperCase()} rate saved.` });
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      return ratesPage(app, request, reply, { errors: err.errors, form }, 422);
    }
  });
}
