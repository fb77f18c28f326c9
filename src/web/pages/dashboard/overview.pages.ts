import type { FastifyInstance } from 'fastify';
import { balanceOf } from '../../../modules/balances/balances.service.js';
import { createDonation, donationTotalsSince, latestDonations } from '../../../modules/donations/donations.service.js';
import { randomDonation } from '../../../modules/donations/donations.sandbox.js';
import { donationChannel } from '../../../modules/outbox/channels.js';
import { html } from '../../html.js';
import { requireUser } from '../../session.js';
import { csrfField, field, money, notice, sendPage, wantsJson } from './common.js';
import { donationItem } from './donations.view.js';
import { REALTIME_HEAD, realtimeConfig } from './realtime.js';

const RECENT = 10;
const DAY_MS = 24 * 3600 * 1000;

/** The sandbox's payment provider title: test alerts are labelled as such everywhere they show. */
export const SANDBOX_PAYIN = 'Sandbox';

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
      latestDonations(db, user.id, RECENT),
      donationTotalsSince(db, user, since),
    ]);
    const csrf = reply.generateCsrf();
    const channel = donationChannel(user.id);
    const sent = field(request.query, 'test') === 'sent';
    const body = html`<section class="card">
<h1>Hello, ${user.name}</h1>
${notice(sent ? 'Test alert sent. It appears below and in your alerts widget.' : undefined)}
<div class="stats">
  <div class="stat"><span class="stat-label">Balance</span><strong class="stat-value" id="balance">${money(balance.amount_minor, balance.currency)}</strong><a href="/dashboard/merchandise">Ledger</a></div>
  <div class="stat"><span class="stat-label">Donations, last 30 days</span><strong class="stat-value">${money(month.total, user.currency)}</strong><span>${month.count} ${month.count === 1 ? 'donation' : 'donations'}</span></div>
</div>
<dl class="facts">
  <dt>User id</dt><dd>${user.id}</dd>
  <dt>Code</dt><dd>${user.code}</dd>
  <dt>Main currency</dt><dd>${user.currency}</dd>
  <dt>Role</dt><dd>${user.role}</dd>
</dl>
</section>
<section class="card">
<div class="card-head">
  <h2>Latest donations <span class="live" id="live-status" data-state="connecting">connecting…</span></h2>
  <form method="post" action="/dashboard/test-alert" id="test-alert-form" class="inline">${csrfField(csrf)}<button type="submit">Send test alert</button></form>
</div>
<p class="hint">New donations appear here as they arrive. A test alert is a sandbox donation with random values, labelled “${SANDBOX_PAYIN}”.</p>
<ul class="feed" id="donation-feed">${recent.map(donationItem)}</ul>
<p class="empty" id="feed-empty"${recent.length ? html` hidden` : ''}>No donations yet. Press “Send test alert” to see how one looks.</p>
<p><a href="/dashboard/donations">All donations →</a></p>
</section>`;
    return sendPage(request, reply, csrf, {
      title: 'Dashboard',
      body,
      head: REALTIME_HEAD,
      data: { page: 'overview', csrf, realtime: await realtimeConfig(app, user.id, [channel]) },
    });
  });

  app.post(
    '/dashboard/test-alert',
    { preHandler: [requireUser, app.csrfProtection], config: { rateLimit: { max: 30, timeWindow: 60_000 } } },
    async (request, reply) => {
      const donation = await createDonation(app.ctx.db, { userId: request.sessionUser!.id, ...randomDonation(), payinSystem: SANDBOX_PAYIN });
      if (wantsJson(request)) return reply.status(201).send({ data: donation });
      return reply.redirect('/dashboard?test=sent', 303);
    },
  );
}
