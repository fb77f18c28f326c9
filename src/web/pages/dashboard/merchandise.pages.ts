import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ValidationError } from '../../../domain/errors.js';
import { balanceOf, streamerLedger } from '../../../modules/balances/balances.service.js';
import { changePromocode } from '../../../modules/merchandise/promocodes.js';
import { streamerSales } from '../../../modules/sales/sales-dashboard.service.js';
import { html } from '../../html.js';
import { fieldErrors } from '../../layout.js';
import { requireUser } from '../../session.js';
import { csrfField, field, money, notice, pageNumber, pager, sendPage, time, type FieldErrors } from './common.js';

const PER_PAGE = 30;

interface Flash {
  notice?: string;
  errors?: FieldErrors;
  promocode?: string;
}

/** Titles are stored as `{locale: title}`; the dashboard shows en_US (always present). */
function titleOf(json: string): string {
  try {
    const titles = JSON.parse(json) as Record<string, unknown>;
    return typeof titles.en_US === 'string' ? titles.en_US : String(Object.values(titles)[0] ?? '');
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
  const body = html`<section class="card">
<h1>Merchandise</h1>
${notice(flash.notice)}
<div class="stats">
  <div class="stat"><span class="stat-label">Balance</span><strong class="stat-value">${money(balance.amount_minor, balance.currency)}</strong>${Object.keys(balance.by_currency).length > 1
    ? html`<span>${Object.entries(balance.by_currency).map(([c, v]) => `${v.toFixed(2)} ${c}`).join(' + ')}</span>`
    : ''}</div>
</div>
<form method="post" action="/dashboard/merchandise/promocode" novalidate>
  ${csrfField(csrf)}
  <label>Your promocode <small>(viewers type it in merchants’ stores; 4–16 letters or digits)</small>
    <input name="merchandise_promocode" required minlength="4" maxlength="16" autocapitalize="characters" value="${flash.promocode ?? user.merchandise_promocode}"></label>
  ${fieldErrors(flash.errors, 'merchandise_promocode')}
  <button type="submit">Save promocode</button>
</form>
</section>
<section class="card">
<h2>Sales</h2>
${sales.rows.length
  ? html`<table class="list"><thead><tr><th>Date</th><th>Merchandise</th><th>Customer</th><th>Items</th><th>Total</th></tr></thead><tbody>
${sales.rows.map(
  (s) => html`<tr>
  <td data-label="Date">${time(s.created_at)}</td>
  <td data-label="Merchandise">${titleOf(s.title)} <small>· ${s.merchant}</small></td>
  <td data-label="Customer">${s.username ?? '—'}</td>
  <td data-label="Items" class="num">${s.bought_amount}</td>
  <td data-label="Total" class="num">${money(s.amount, s.currency)}</td>
</tr>`,
)}</tbody></table>
${pager('/dashboard/merchandise', query, salesAt, Math.ceil(sales.total / PER_PAGE), 'sales')}`
  : html`<p class="empty">No sales yet. Sales reported by merchants with your promocode or id show up here.</p>`}
</section>
<section class="card">
<h2>Balance ledger</h2>
${ledger.rows.length
  ? html`<table class="list"><thead><tr><th>Date</th><th>For</th><th>Share</th><th>Rate</th><th>Credited</th></tr></thead><tbody>
${ledger.rows.map(
  (l) => html`<tr>
  <td data-label="Date">${time(l.created_at)}</td>
  <td data-label="For">Sale #${l.source_id}</td>
  <td data-label="Share" class="num">${money(l.amount, l.currency)}</td>
  <td data-label="Rate" class="num">${l.currency === l.credited_currency ? '—' : String(Number(l.rate))}</td>
  <td data-label="Credited" class="num">${money(l.credited_amount, l.credited_currency)}</td>
</tr>`,
)}</tbody></table>
${pager('/dashboard/merchandise', query, ledgerAt, Math.ceil(ledger.total / PER_PAGE), 'ledger')}`
  : html`<p class="empty">Nothing credited yet.</p>`}
</section>`;
  return sendPage(request, reply, csrf, { title: 'Merchandise', body, status });
}

/** GET /dashboard/merchandise (balance, sales, ledger) and POST …/promocode (promocodes.changePromocode). */
export async function merchandisePages(app: FastifyInstance): Promise<void> {
  app.get('/dashboard/merchandise', { preHandler: requireUser }, (request, reply) => render(app, request, reply));

  app.post('/dashboard/merchandise/promocode', { preHandler: [requireUser, app.csrfProtection] }, async (request, reply) => {
    const typed = field(request.body, 'merchandise_promocode');
    try {
      const code = await changePromocode(app.ctx.db, request.sessionUser!.id, typed);
      request.sessionUser = { ...request.sessionUser!, merchandise_promocode: code };
      return render(app, request, reply, { notice: `Your promocode is now ${code}.` });
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      return render(app, request, reply, { errors: err.errors, promocode: typed }, 422);
    }
  });
}
