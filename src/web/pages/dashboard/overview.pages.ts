import type { FastifyInstance } from 'fastify';
import { balanceOf } from '../../../modules/balances/balances.service.js';
import { createDonation, donationTotalsSince, latestDonations } from '../../../modules/donations/donations.service.js';
import { randomDonation, SANDBOX_PAYIN } from '../../../modules/donations/donations.sandbox.js';
import { DAY_MS, donationsPerDay, topDonors } from '../../../modules/donations/donation-stats.repository.js';
import { listGoals } from '../../../modules/goals/goals.service.js';
import { onboardingChecklist, recordMilestone } from '../../../modules/onboarding/onboarding.service.js';
import { getActivePoll } from '../../../modules/polls/polls.service.js';
import { widgetTokenFor } from '../../../modules/widgets/widget-tokens.service.js';
import { shownDonations } from '../../../modules/moderation/moderation.service.js';
import { donationChannel, goalChannel, pollChannel } from '../../../modules/outbox/channels.js';
import { redirectWithFlash, takeFlash } from '../../flash.js';
import { html } from '../../html.js';
import { pageTranslator } from '../../i18n.js';
import { csrfField, money, notice, sendPage, wantsJson } from './common.js';
import { donationItem } from './donations.view.js';
import { goalProgress } from './goals.pages.js';
import { CHART_DAYS, checklist, copyRow, dailyChart, qrCode, topDonorsTable } from './overview.view.js';
import { pollStandings } from './polls.pages.js';
import { REALTIME_HEAD, realtimeConfig } from './realtime.js';

const RECENT = 10;
const TOP_DONORS = 5;

export { SANDBOX_PAYIN };

/**
 * GET /dashboard — balance and totals; the first-hour checklist (onboarding); the streamer's
 * donation link with its QR code and the three widget URLs, each with a copy button; the latest
 * donations (new ones arrive live on `$alerts:donation_<id>`) and "Send test alert" (POST
 * /dashboard/test-alert, the sandbox); donations per day and top donors for 30 days; running
 * goals and the poll, live on their channels. Everything is drawn on the server (the chart and
 * the QR code are inline SVG): the page needs no script beyond our own files.
 */
export async function overviewPages(app: FastifyInstance): Promise<void> {
  app.get('/dashboard', async (request, reply) => {
    const user = request.sessionUser!;
    const db = app.ctx.db;
    const now = Date.now();
    const since = now - 30 * DAY_MS;
    const today = Math.floor(now / DAY_MS);
    const chartSince = (today - CHART_DAYS + 1) * DAY_MS;
    const [balance, recent, month, steps, token, perDay, donors, goals, poll] = await Promise.all([
      balanceOf(db, user.id),
      // The moderated text (the overview may be on stream), as the live feed receives it.
      latestDonations(db, user.id, RECENT).then((rows) => shownDonations(db, user.id, rows)),
      donationTotalsSince(db, user, since),
      onboardingChecklist(db, user.id),
      widgetTokenFor(db, app.ctx.secrets.encryptionKey, user.id),
      donationsPerDay(db, user.id, user.currency, chartSince),
      topDonors(db, user.id, user.currency, chartSince, TOP_DONORS),
      listGoals(db, user.id, { state: 'active' }),
      getActivePoll(db, user.id),
    ]);
    const csrf = reply.generateCsrf();
    const t = pageTranslator(request);
    const flash = takeFlash(request, reply);
    const base = app.ctx.config.publicUrl;
    const donationUrl = `${base}/r/${encodeURIComponent(user.code)}`;
    const q = encodeURIComponent(token);
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
${checklist(t, steps)}
<section class="card" id="links">
<h2>${t.t('overview.links_title')}</h2>
<div class="donation-link">
  <div class="donation-link-text">
    ${copyRow(t, 'donation-url', t.t('overview.donation_link'), donationUrl, '/dashboard/onboarding/link-copied')}
    <p class="hint">${t.t('overview.donation_link_hint')}</p>
  </div>
  <figure class="qr" id="donation-qr" data-url="${donationUrl}">${qrCode(donationUrl)}<figcaption class="hint">${t.t('overview.qr_caption')}</figcaption></figure>
</div>
<h3>${t.t('overview.widgets_title')}</h3>
<p class="hint">${t.t('overview.widgets_hint')}</p>
${copyRow(t, 'widget-url-alerts', t.t('widget.title.alerts'), `${base}/widget/alerts?token=${q}`)}
${copyRow(t, 'widget-url-goal', t.t('widget.title.goal'), `${base}/widget/goal?token=${q}`)}
${copyRow(t, 'widget-url-poll', t.t('widget.title.poll'), `${base}/widget/poll?token=${q}`)}
<p><a href="/dashboard/widgets">${t.t('overview.widgets_settings')}</a></p>
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
</section>
<section class="card" id="numbers">
<h2>${t.t('overview.chart_title')}</h2>
${dailyChart(t, perDay, today, user.currency)}
<h3>${t.t('overview.top_title')}</h3>
${topDonorsTable(t, donors, user.currency)}
</section>
<div class="cards-2">
<section class="card">
<h2>${t.t('overview.goals_title')}</h2>
<div id="active-goals">${goals.map((g) => html`<article class="item goal" data-goal-id="${g.id}"><div class="item-head"><h3 class="goal-title">${g.title}</h3><span class="tag state">${t.t('js.state.running')}</span></div>${goalProgress(t, g)}</article>`)}</div>
<p class="empty" id="goals-empty"${goals.length ? html` hidden` : ''}>${t.t('overview.goals_none')}</p>
<p><a href="/dashboard/goals">${t.t('overview.goals_start')}</a></p>
</section>
<section class="card">
<h2>${t.t('overview.poll_title')}</h2>
<div id="active-poll">${poll ? html`<article class="item poll" data-poll-id="${poll.id}" data-type="${poll.type}" data-currency="${poll.currency}"><div class="item-head"><h3>${poll.title}</h3><span class="tag state">${t.t('js.state.running')}</span></div>${pollStandings(t, poll)}</article>` : ''}</div>
<p class="empty" id="poll-empty"${poll ? html` hidden` : ''}>${t.t('overview.poll_none')}</p>
<p><a href="/dashboard/polls">${t.t('overview.poll_start')}</a></p>
</section>
</div>`;
    return sendPage(request, reply, csrf, {
      title: t.t('overview.title'),
      body,
      head: REALTIME_HEAD,
      data: { page: 'overview', csrf, realtime: await realtimeConfig(app, user.id, [donationChannel(user.id), goalChannel(user.id), pollChannel(user.id)]) },
    });
  });

  app.post('/dashboard/test-alert', async (request, reply) => {
    const userId = request.sessionUser!.id;
    const donation = await createDonation(app.ctx.db, { userId, ...randomDonation(), payinSystem: SANDBOX_PAYIN });
    await recordMilestone(app.ctx.db, userId, 'test_alert_sent');
    if (wantsJson(request)) return reply.status(201).send({ data: donation });
    return redirectWithFlash(request, reply, '/dashboard', { notice: pageTranslator(request).t('overview.test_sent') });
  });

  // The copy button of the donation link reports here (dashboard.js): the checklist's "share" step.
  app.post('/dashboard/onboarding/link-copied', async (request, reply) => {
    await recordMilestone(app.ctx.db, request.sessionUser!.id, 'link_shared');
    return reply.status(204).send();
  });
}
