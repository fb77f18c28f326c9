import type { FastifyInstance } from 'fastify';
import { balanceOf } from '../../../modules/balances/balances.service.js';
import { createDonation, donationTotalsSince, latestDonations } from '../../../modules/donations/donations.service.js';
import { randomDonation, SANDBOX_PAYIN } from '../../../modules/donations/donations.sandbox.js';
import { recordMilestone } from '../../../modules/onboarding/onboarding.service.js';
import { shownDonations } from '../../../modules/moderation/moderation.service.js';
import { donationChannel } from '../../../modules/outbox/channels.js';
import { redirectWithFlash, takeFlash } from '../../flash.js';
import { html } from '../../html.js';
import { pageTranslator } from '../../i18n.js';
import { requireUser } from '../../session.js';
import { csrfField, field, money, notice, sendPage, wantsJson } from './common.js';
import { donationItem } from './donations.view.js';
import { REALTIME_HEAD, realtimeConfig } from './realtime.js';

const RECENT = 10;
const DAY_MS = 24 * 3600 * 1000;

export { SANDBOX_PAYIN };

/**
 * GET /dashboard — balance, donation totals, the latest donations (new ones arrive live on
 * `$alerts:donation_<id>`), and "Send test alert" (POST /dashboard/test-alert, the sandbox).
 */
export async function overviewPages(app: FastifyInstance): Promise<void> {
  app.get('/dashboard', { preHandler: requireUser }, async (request, reply) => {
    const user = request.sessionUser!;
    const db = app.ctx.db;
    const since = Date.now() - 30 * DAY_MS;
    const [balance, recent, month] = await Promise.all([
      balanceOf(db, user.id),
      // The moderated text (the overview may be on stream), as the live feed receives it.
      latestDonations(db, user.id, RECENT).then((rows) => shownDonations(db, user.id, rows)),
      donationTotalsSince(db, user, since),
    ]);
    const csrf = reply.generateCsrf();
    const t = pageTranslator(request);
    const channel = donationChannel(user.id);
    const flash = takeFlash(request, reply);
    const body = html`<section class="card">
<h1>${t.t('overview.hello', { name: user.name })}</h1>
${notice(flash.notice)}
<div class="stats">
  <div class="stat"><span class="stat-label">${t.t('overview.balance')}</span><strong class="stat-value" id="balance">${money(t, balance.amount_minor, balance.currency)}</strong><a href="/dashboard/merchandise">${t.t('overview.ledger')}</a></div>
  <div class="stat"><span class="stat-label">${t.t('overview.month')}</span><strong class="stat-value">${money(t, month.total, user.currency)}</strong><span>${t.t('overview.count', { count: month.count })}</span></div>
</div>
<dl class="facts">
  <dt>${t.t('overview.user_id')}</dt><dd>${user.id}</dd>
  <dt>${t.t('overview.code')}</dt><dd>${user.code}</dd>
  <dt>${t.t('overview.currency')}</dt><dd>${user.currency}</dd>
  <dt>${t.t('overview.role')}</dt><dd>${user.role === 'admin' ? t.t('overview.role_admin') : t.t('overview.role_streamer')}</dd>
</dl>
</section>
<section class="card">
<div class="card-head">
  <h2>${t.t('overview.latest')} <span class="live" id="live-status" data-state="connecting">${t.t('js.live.connecting')}</span></h2>
  <form method="post" action="/dashboard/test-alert" id="test-alert-form" class="inline">${csrfField(csrf)}<button type="submit">${t.t('js.test_alert.send')}</button></form>
</div>
<p class="hint">${t.t('overview.hint', { label: SANDBOX_PAYIN })}</p>
<ul class="feed" id="donation-feed">${recent.map((d) => donationItem(t, d))}</ul>
<p class="empty" id="feed-empty"${recent.length ? html` hidden` : ''}>${t.t('overview.empty')}</p>
<p><a href="/dashboard/donations">${t.t('overview.all')}</a></p>
</section>`;
    return sendPage(request, reply, csrf, {
      title: t.t('overview.title'),
      body,
      head: REALTIME_HEAD,
      data: { page: 'overview', csrf, realtime: await realtimeConfig(app, user.id, [channel]) },
    });
  });

  app.post(
    '/dashboard/test-alert',
    { preHandler: [requireUser, app.csrfProtection], config: { rateLimit: { max: 30, timeWindow: 60_000 } } },
    async (request, reply) => {
      const userId = request.sessionUser!.id;
      const donation = await createDonation(app.ctx.db, { userId, ...randomDonation(), payinSystem: SANDBOX_PAYIN });
      await recordMilestone(app.ctx.db, userId, 'test_alert_sent');
      if (wantsJson(request)) return reply.status(201).send({ data: donation });
      return redirectWithFlash(request, reply, '/dashboard', { notice: pageTranslator(request).t('overview.test_sent') });
    },
  );
}
