import type { FastifyInstance } from 'fastify';
import { INPUT_CURRENCIES } from '../../../domain/currency.js';
import { searchDonations } from '../../../modules/donations/donations.service.js';
import { fieldErrors } from '../../layout.js';
import { html } from '../../html.js';
import { requireUser } from '../../session.js';
import { pageNumber, pager, sendPage } from './common.js';
import { DONATIONS_PER_PAGE, readDonationFilter } from './donations.filter.js';
import { donationRow } from './donations.view.js';

/** GET /dashboard/donations — 30 per page, newest first, filtered by the query (a plain GET form). */
export async function donationsPages(app: FastifyInstance): Promise<void> {
  app.get('/dashboard/donations', { preHandler: requireUser }, async (request, reply) => {
    const user = request.sessionUser!;
    const { form, filter, errors } = readDonationFilter(request.query);
    const invalid = Object.keys(errors).length > 0;
    const current = pageNumber(request.query);
    const { rows, total } = invalid ? { rows: [], total: 0 } : await searchDonations(app.ctx.db, user.id, filter, current, DONATIONS_PER_PAGE);
    const last = Math.max(1, Math.ceil(total / DONATIONS_PER_PAGE));
    const filtered = Object.values(form).some(Boolean);
    const query = new URLSearchParams(Object.entries(form).filter(([, v]) => v) as [string, string][]);
    const csrf = reply.generateCsrf();
    const body = html`<section class="card">
<h1>Donations</h1>
<form method="get" action="/dashboard/donations" class="filters" role="search">
  <label>Donor name <input name="donor" maxlength="64" value="${form.donor}" placeholder="contains…"></label>
  ${fieldErrors(errors, 'donor')}
  <label>Currency <select name="currency"><option value="">All</option>${INPUT_CURRENCIES.map((c) => html`<option${c === form.currency ? html` selected` : ''}>${c}</option>`)}</select></label>
  ${fieldErrors(errors, 'currency')}
  <label>From <input type="date" name="from" value="${form.from}"></label>
  ${fieldErrors(errors, 'from')}
  <label>To <input type="date" name="to" value="${form.to}"></label>
  ${fieldErrors(errors, 'to')}
  <label>Minimum amount <small>(${form.currency || user.currency})</small><input name="min" inputmode="decimal" value="${form.min}" placeholder="0.00"></label>
  ${fieldErrors(errors, 'min')}
  <div class="filter-actions"><button type="submit">Filter</button>${filtered ? html` <a href="/dashboard/donations">Clear</a>` : ''}</div>
</form>
</section>
<section class="card">
${invalid
  ? html`<p class="error">Fix the filters above to see donations.</p>`
  : html`<p class="hint">${total} ${total === 1 ? 'donation' : 'donations'}${filtered ? ' match' : ''}. Times are shown in your local time.</p>
${rows.length
  ? html`<table class="list donations"><thead><tr><th>Date</th><th>Donor</th><th>Amount</th><th>Message</th><th>Shown</th><th>Via</th></tr></thead><tbody>${rows.map(donationRow)}</tbody></table>`
  : html`<p class="empty">${filtered ? 'No donation matches these filters.' : current > 1 ? 'No donations on this page.' : 'No donations yet.'}</p>`}
${pager('/dashboard/donations', query, current, last)}`}
</section>`;
    return sendPage(request, reply, csrf, { title: 'Donations', body, status: invalid ? 400 : 200 });
  });
}
