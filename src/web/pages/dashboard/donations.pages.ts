import type { FastifyInstance } from 'fastify';
import { INPUT_CURRENCIES } from '../../../domain/currency.js';
import { searchDonations } from '../../../modules/donations/donations.service.js';
import { shownDonations } from '../../../modules/moderation/moderation.service.js';
import { fieldErrors } from '../../layout.js';
import { html } from '../../html.js';
import { pageTranslator } from '../../i18n.js';
import { pageNumber, pager, sendPage } from './common.js';
import { DONATIONS_PER_PAGE, readDonationFilter } from './donations.filter.js';
import { donationRow } from './donations.view.js';

/** GET /dashboard/donations — 30 per page, newest first, filtered by the query (a plain GET form). */
export async function donationsPages(app: FastifyInstance): Promise<void> {
  app.get('/dashboard/donations', async (request, reply) => {
    const user = request.sessionUser!;
    const t = pageTranslator(request);
    const { form, filter, errors } = readDonationFilter(t, request.query);
    const invalid = Object.keys(errors).length > 0;
    const current = pageNumber(request.query);
    const found = invalid ? { rows: [], total: 0 } : await searchDonations(app.ctx.db, user.id, filter, current, DONATIONS_PER_PAGE);
    // The dashboard may be on stream: it shows what the streamer's rules let the stream show.
    const rows = await shownDonations(app.ctx.db, user.id, found.rows);
    const { total } = found;
    const last = Math.max(1, Math.ceil(total / DONATIONS_PER_PAGE));
    const filtered = Object.values(form).some(Boolean);
    const query = new URLSearchParams(Object.entries(form).filter(([, v]) => v) as [string, string][]);
    const csrf = reply.generateCsrf();
    const body = html`<section class="card">
<h1>${t.t('donations.title')}</h1>
<form method="get" action="/dashboard/donations" class="filters" role="search">
  <label>${t.t('donations.filter.donor')} <input name="donor" maxlength="64" value="${form.donor}" placeholder="${t.t('donations.filter.donor_placeholder')}"></label>
  ${fieldErrors(errors, 'donor')}
  <label>${t.t('donations.filter.currency')} <select name="currency"><option value="">${t.t('donations.filter.all')}</option>${INPUT_CURRENCIES.map((c) => html`<option${c === form.currency ? html` selected` : ''}>${c}</option>`)}</select></label>
  ${fieldErrors(errors, 'currency')}
  <label>${t.t('donations.filter.from')} <input type="date" name="from" value="${form.from}"></label>
  ${fieldErrors(errors, 'from')}
  <label>${t.t('donations.filter.to')} <input type="date" name="to" value="${form.to}"></label>
  ${fieldErrors(errors, 'to')}
  <label>${t.t('donations.filter.min')} <small>(${form.currency || user.currency})</small><input name="min" inputmode="decimal" value="${form.min}" placeholder="${t.decimal(0)}"></label>
  ${fieldErrors(errors, 'min')}
  <div class="filter-actions"><button type="submit">${t.t('donations.filter.submit')}</button>${filtered ? html` <a href="/dashboard/donations">${t.t('donations.filter.clear')}</a>` : ''}</div>
</form>
</section>
<section class="card">
${invalid
  ? html`<p class="error">${t.t('donations.fix_filters')}</p>`
  : html`<p class="hint">${filtered ? t.t('donations.count_matching', { count: total }) : t.t('donations.count', { count: total })} ${t.t('donations.local_time')}</p>
${rows.length
  ? html`<table class="list donations"><thead><tr><th>${t.t('donations.col.date')}</th><th>${t.t('donations.col.donor')}</th><th>${t.t('donations.col.amount')}</th><th>${t.t('donations.col.message')}</th><th>${t.t('donations.col.shown')}</th><th>${t.t('donations.col.via')}</th></tr></thead><tbody>${rows.map((d) => donationRow(t, d))}</tbody></table>`
  : html`<p class="empty">${filtered ? t.t('donations.none_matching') : current > 1 ? t.t('donations.none_on_page') : t.t('donations.none')}</p>`}
${pager(t, '/dashboard/donations', query, current, last)}`}
</section>`;
    return sendPage(request, reply, csrf, { title: t.t('donations.title'), body, status: invalid ? 400 : 200 });
  });
}
