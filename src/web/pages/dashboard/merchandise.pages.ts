import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ValidationError } from '../../../domain/errors.js';
import { balanceOf, streamerLedger } from '../../../modules/balances/balances.service.js';
import { changePromocode } from '../../../modules/merchandise/promocodes.js';
import { streamerSales } from '../../../modules/sales/sales-dashboard.service.js';
import { redirectWithFlash, takeFlash } from '../../flash.js';
import { html } from '../../html.js';
import { fieldErrors } from '../../layout.js';
import { pageTranslator } from '../../i18n.js';
import { csrfField, field, money, notice, pageNumber, pager, sendPage, time, type FieldErrors } from './common.js';
import { fieldErrorTexts } from '../../error-text.js';

const PER_PAGE = 30;

interface Flash {
  notice?: string;
  errors?: FieldErrors;
  promocode?: string;
}

/** Titles are stored as `{locale: title}`; the dashboard shows en_US (always present). */
/** The merchandise title in the page's locale (spec §2: titles keyed by locale), else en_US, else any. */
function titleOf(json: string, locale: string): string {
  try {
    const titles = JSON.parse(json) as Record<string, unknown>;
    const pick = [titles[locale], titles.en_US].find((v): v is string => typeof v === 'string' && v !== '');
    return pick ?? String(Object.values(titles)[0] ?? '');
  } catch {
    return '';
  }
}

async function render(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, flash: Flash = {}, status = 200) {
  const user = request.sessionUser!;
  const db = app.ctx.db;
  const salesAt = pageNumber(request.query, 'sales');
  const ledgerAt = pageNumber(request.query, 'ledger');
  const [balance, sales, ledger] = await Promise.all([
    balanceOf(db, user.id),
    streamerSales(db, user.id, salesAt, PER_PAGE),
    streamerLedger(db, user.id, ledgerAt, PER_PAGE),
  ]);
  const query = new URLSearchParams();
  if (salesAt > 1) query.set('sales', String(salesAt));
  if (ledgerAt > 1) query.set('ledger', String(ledgerAt));
  const csrf = reply.generateCsrf();
  const t = pageTranslator(request);
  const body = html`<section class="card">
<h1>${t.t('merch.title')}</h1>
${notice(flash.notice)}
<div class="stats">
  <div class="stat"><span class="stat-label">${t.t('overview.balance')}</span><strong class="stat-value">${money(t, balance.amount_minor, balance.currency)}</strong>${Object.keys(balance.by_currency).length > 1
    ? html`<span>${Object.entries(balance.by_currency).map(([c, v]) => t.moneyMajor(v, c)).join(' + ')}</span>`
    : ''}</div>
</div>
<form method="post" action="/dashboard/merchandise/promocode" novalidate>
  ${csrfField(csrf)}
  <label>${t.t('merch.promocode')} <small>${t.t('merch.promocode_hint')}</small>
    <input name="merchandise_promocode" required minlength="4" maxlength="16" autocapitalize="characters" value="${flash.promocode ?? user.merchandise_promocode}"></label>
  ${fieldErrors(flash.errors, 'merchandise_promocode')}
  <button type="submit">${t.t('merch.save_promocode')}</button>
</form>
</section>
<section class="card">
<h2>${t.t('merch.sales')}</h2>
${sales.rows.length
  ? html`<table class="list"><thead><tr><th>${t.t('donations.col.date')}</th><th>${t.t('merch.col.merchandise')}</th><th>${t.t('merch.col.customer')}</th><th>${t.t('merch.col.items')}</th><th>${t.t('merch.col.total')}</th></tr></thead><tbody>
${sales.rows.map(
  (s) => html`<tr>
  <td data-label="${t.t('donations.col.date')}">${time(t, s.created_at)}</td>
  <td data-label="${t.t('merch.col.merchandise')}">${titleOf(s.title, t.locale)} <small>· ${s.merchant}</small></td>
  <td data-label="${t.t('merch.col.customer')}">${s.username ?? '—'}</td>
  <td data-label="${t.t('merch.col.items')}" class="num">${t.number(s.bought_amount)}</td>
  <td data-label="${t.t('merch.col.total')}" class="num">${money(t, s.amount, s.currency)}</td>
</tr>`,
)}</tbody></table>
${pager(t, '/dashboard/merchandise', query, salesAt, Math.ceil(sales.total / PER_PAGE), 'sales')}`
  : html`<p class="empty">${t.t('merch.no_sales')}</p>`}
</section>
<section class="card">
<h2>${t.t('merch.ledger')}</h2>
${ledger.rows.length
  ? html`<table class="list"><thead><tr><th>${t.t('donations.col.date')}</th><th>${t.t('merch.col.for')}</th><th>${t.t('merch.col.share')}</th><th>${t.t('merch.col.rate')}</th><th>${t.t('merch.col.credited')}</th></tr></thead><tbody>
${ledger.rows.map(
  (l) => html`<tr>
  <td data-label="${t.t('donations.col.date')}">${time(t, l.created_at)}</td>
  <td data-label="${t.t('merch.col.for')}">${t.t('merch.sale_number', { id: l.source_id })}</td>
  <td data-label="${t.t('merch.col.share')}" class="num">${money(t, l.amount, l.currency)}</td>
  <td data-label="${t.t('merch.col.rate')}" class="num">${l.currency === l.credited_currency ? '—' : t.number(Number(l.rate), 10)}</td>
  <td data-label="${t.t('merch.col.credited')}" class="num">${money(t, l.credited_amount, l.credited_currency)}</td>
</tr>`,
)}</tbody></table>
${pager(t, '/dashboard/merchandise', query, ledgerAt, Math.ceil(ledger.total / PER_PAGE), 'ledger')}`
  : html`<p class="empty">${t.t('merch.nothing_credited')}</p>`}
</section>`;
  return sendPage(request, reply, csrf, { title: t.t('merch.title'), body, status });
}

/** GET /dashboard/merchandise (balance, sales, ledger) and POST …/promocode (promocodes.changePromocode). */
export async function merchandisePages(app: FastifyInstance): Promise<void> {
  app.get('/dashboard/merchandise', (request, reply) => render(app, request, reply, takeFlash(request, reply)));

  app.post('/dashboard/merchandise/promocode', async (request, reply) => {
    const typed = field(request.body, 'merchandise_promocode');
    try {
      const code = await changePromocode(app.ctx.db, request.sessionUser!.id, typed);
      request.sessionUser = { ...request.sessionUser!, merchandise_promocode: code };
      return redirectWithFlash(request, reply, '/dashboard/merchandise', { notice: pageTranslator(request).t('merch.notice.promocode', { code }) });
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      return render(app, request, reply, { errors: fieldErrorTexts(pageTranslator(request), err), promocode: typed }, 422);
    }
  });
}
