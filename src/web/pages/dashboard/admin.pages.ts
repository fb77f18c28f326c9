import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { OUTPUT_CURRENCIES } from '../../../domain/currency.js';
import { ForbiddenError, ValidationError } from '../../../domain/errors.js';
import { searchUsers } from '../../../modules/accounts/accounts.service.js';
import { setAccountActive } from '../../../modules/accounts/profile.service.js';
import { listCurrencyRates, setRate } from '../../../modules/currencies/currencies.service.js';
import { redirectWithFlash, takeFlash } from '../../flash.js';
import { html } from '../../html.js';
import { fieldErrors } from '../../layout.js';
import { pageTranslator } from '../../i18n.js';
import { csrfField, field, idParam, notice, pageNumber, pager, sendPage, time, type FieldErrors } from './common.js';
import { errorText, fieldErrorTexts } from '../../error-text.js';

const PER_PAGE = 30;

async function usersPage(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, flash: { notice?: string; error?: string } = {}, status = 200) {
  const me = request.sessionUser!;
  const search = field(request.query, 'q').trim().slice(0, 100);
  const current = pageNumber(request.query);
  const { users, total } = await searchUsers(app.ctx.db, search, current, PER_PAGE);
  const csrf = reply.generateCsrf();
  const query = new URLSearchParams(search ? { q: search } : {});
  const t = pageTranslator(request);
  const body = html`<section class="card">
<h1>${t.t('nav.users')}</h1>
${notice(flash.notice)}
${flash.error ? html`<p class="error" role="alert">${flash.error}</p>` : ''}
<form method="get" action="/admin/users" class="filters" role="search">
  <label>${t.t('admin.search')} <input name="q" value="${search}" placeholder="${t.t('admin.search_placeholder')}"></label>
  <div class="filter-actions"><button type="submit">${t.t('admin.search')}</button>${search ? html` <a href="/admin/users">${t.t('donations.filter.clear')}</a>` : ''}</div>
</form>
<p class="hint">${t.t('admin.accounts', { count: total })} ${t.t('admin.deactivated_hint')}</p>
<table class="list"><thead><tr><th>${t.t('admin.col.id')}</th><th>${t.t('profile.name')}</th><th>${t.t('auth.email')}</th><th>${t.t('overview.role')}</th><th>${t.t('admin.col.status')}</th><th>${t.t('admin.col.since')}</th><th></th></tr></thead><tbody>${users.map(
  (u) => html`<tr data-user-id="${u.id}">
  <td data-label="${t.t('admin.col.id')}">${u.id}</td>
  <td data-label="${t.t('profile.name')}">${u.name} <small><code>${u.code}</code></small></td>
  <td data-label="${t.t('auth.email')}">${u.email}</td>
  <td data-label="${t.t('overview.role')}">${u.role === 'admin' ? t.t('overview.role_admin') : t.t('overview.role_streamer')}</td>
  <td data-label="${t.t('admin.col.status')}">${u.is_active ? t.t('admin.active') : html`<strong class="inactive">${t.t('admin.deactivated')}</strong>`}</td>
  <td data-label="${t.t('admin.col.since')}">${time(t, u.created_at)}</td>
  <td class="actions">${u.id === me.id
    ? html`<small>${t.t('admin.you')}</small>`
    : html`<form method="post" action="/admin/users/${u.id}/active" class="inline"${u.is_active ? html` data-confirm="${t.t('admin.confirm_deactivate')}"` : ''}>
    ${csrfField(csrf)}<input type="hidden" name="active" value="${u.is_active ? '0' : '1'}">
    <button type="submit"${u.is_active ? html` class="danger"` : ''}>${u.is_active ? t.t('admin.deactivate') : t.t('admin.activate')}</button></form>`}</td>
</tr>`,
)}
</tbody></table>
${pager(t, '/admin/users', query, current, Math.ceil(total / PER_PAGE))}
</section>`;
  return sendPage(request, reply, csrf, { title: t.t('nav.users'), body, status });
}

async function ratesPage(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, flash: { notice?: string; errors?: FieldErrors; form?: Record<string, string> } = {}, status = 200) {
  const rates = await listCurrencyRates(app.ctx.db);
  const csrf = reply.generateCsrf();
  const form = flash.form ?? {};
  const t = pageTranslator(request);
  const col = { currency: t.t('donations.filter.currency'), per: t.t('admin.rates.per_usd'), asOf: t.t('admin.rates.as_of'), updated: t.t('admin.rates.updated') };
  const body = html`<section class="card">
<h1>${t.t('admin.rates.title')}</h1>
${notice(flash.notice)}
<p class="hint">${t.t('admin.rates.hint')}</p>
<table class="list"><thead><tr><th>${col.currency}</th><th>${col.per}</th><th>${col.asOf}</th><th>${col.updated}</th></tr></thead><tbody>
<tr><td data-label="${col.currency}">USD</td><td data-label="${col.per}" class="num">1</td><td data-label="${col.asOf}">${t.t('admin.rates.base')}</td><td data-label="${col.updated}">—</td></tr>
${rates
  .filter((r) => r.currency !== 'USD')
  .map(
    (r) => html`<tr><td data-label="${col.currency}">${r.currency}</td><td data-label="${col.per}" class="num">${t.number(Number(r.per_usd), 10)}</td><td data-label="${col.asOf}">${r.as_of}</td><td data-label="${col.updated}">${time(t, Number(r.updated_at))}</td></tr>`,
  )}
</tbody></table>
</section>
<section class="card">
<h2>${t.t('admin.rates.set_title')}</h2>
<form method="post" action="/admin/rates" novalidate>
  ${csrfField(csrf)}
  <div class="row">
    <label>${col.currency} <select name="currency">${OUTPUT_CURRENCIES.filter((c) => c !== 'USD').map((c) => html`<option${c === form.currency ? html` selected` : ''}>${c}</option>`)}</select></label>
    <label>${t.t('admin.rates.units')} <input name="rate" inputmode="decimal" required value="${form.rate ?? ''}" placeholder="0.92"></label>
    <label>${col.asOf} <small>${t.t('donor.optional')}</small><input type="date" name="as_of" value="${form.as_of ?? ''}"></label>
  </div>
  ${fieldErrors(flash.errors, 'currency')}${fieldErrors(flash.errors, 'rate')}${fieldErrors(flash.errors, 'as_of')}
  <button type="submit">${t.t('admin.rates.save')}</button>
</form>
</section>`;
  return sendPage(request, reply, csrf, { title: t.t('admin.rates.title'), body, status });
}

/** /admin/users (list, deactivate/activate) and /admin/rates (list, set). Administrators only. */
export async function adminPages(app: FastifyInstance): Promise<void> {
  app.get('/admin', async (_request, reply) => reply.redirect('/admin/users'));
  app.get('/admin/users', (request, reply) => usersPage(app, request, reply, takeFlash(request, reply)));

  app.post<{ Params: { id: string } }>('/admin/users/:id/active', async (request, reply) => {
    const userId = idParam(request.params.id);
    const active = field(request.body, 'active') === '1';
    try {
      const user = await setAccountActive(app.ctx.db, app.ctx.revocations, request.sessionUser!.id, userId, active);
      return redirectWithFlash(request, reply, '/admin/users', { notice: pageTranslator(request).t(active ? 'admin.notice.activated' : 'admin.notice.deactivated', { name: user.name }) });
    } catch (err) {
      if (err instanceof ForbiddenError) return usersPage(app, request, reply, { error: errorText(pageTranslator(request), err) }, 403);
      throw err;
    }
  });

  app.get('/admin/rates', (request, reply) => ratesPage(app, request, reply, takeFlash(request, reply)));

  app.post('/admin/rates', async (request, reply) => {
    const form = { currency: field(request.body, 'currency'), rate: field(request.body, 'rate').trim(), as_of: field(request.body, 'as_of').trim() };
    try {
      await setRate(app.ctx.db, form.currency, form.rate === '' ? Number.NaN : form.rate, form.as_of || undefined);
      return redirectWithFlash(request, reply, '/admin/rates', { notice: pageTranslator(request).t('admin.rates.notice', { currency: form.currency.toUpperCase() }) });
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      return ratesPage(app, request, reply, { errors: fieldErrorTexts(pageTranslator(request), err), form }, 422);
    }
  });
}
