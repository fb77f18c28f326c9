import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { INPUT_CURRENCIES } from '../../domain/currency.js';
import { crossRate } from '../../domain/rates.js';
import { sendJsonError } from '../../http/error-handler.js';
import type { UserRow } from '../../modules/accounts/accounts.table.js';
import { currentRates } from '../../modules/currencies/currencies.service.js';
import { getGoal, listGoals } from '../../modules/goals/goals.service.js';
import { goalChannel, pollChannel, widgetChannel } from '../../modules/outbox/channels.js';
import { getActivePoll } from '../../modules/polls/polls.service.js';
import { recordMilestone } from '../../modules/onboarding/onboarding.service.js';
import { markShown, unshownAlerts } from '../../modules/widgets/alerts.service.js';
import { listVariations } from '../../modules/widgets/variations.service.js';
import { userForWidgetToken } from '../../modules/widgets/widget-tokens.service.js';
import { localeOr } from '../../i18n/locales.js';
import { translator, type Translator } from '../../i18n/translator.js';
import { visitorLocale } from '../i18n.js';
import { errorPage, scriptMessages } from '../layout.js';
import { html, jsonForScript, type Html } from '../html.js';

/**
 * OBS browser sources: /widget/alerts, /widget/goal, /widget/poll, each authenticated only by
 * the streamer's widget token in `?token=` (no log-in, no cookies), and their small JSON API
 * under /widget/api. Pages carry short-lived real-time tokens; centrifuge-js 5 (served from
 * /static/vendor/centrifuge.js, as for the dashboard) renews them through GET /widget/api/token, so a regenerated
 * widget token disconnects open widgets at once (their real-time tokens name the widget token, see
 * realtime-tokens) — and the page itself re-checks its token every `tokenCheckMs`.
 */

/** Lifetime of the real-time tokens a widget page holds. */
export const WIDGET_REALTIME_TTL_SECONDS = 15 * 60;
/** How often an open widget checks that its widget token still works. */
export const WIDGET_TOKEN_CHECK_MS = 60_000;

/** Before each page's own script, in this order. */
const COMMON_SCRIPTS = ['/static/vendor/centrifuge.js', '/static/common.js', '/static/widget-common.js'];
/** The alerts widget without a connection: the settings page's preview. */
export const PREVIEW_SCRIPTS = ['/static/common.js', '/static/widget-common.js', '/static/widget-alerts.js'];

/** The streamer's language: a widget speaks it whatever the language of the machine running OBS. */
const streamerTranslator = (user: UserRow): Promise<Translator> => translator(localeOr(user.language));

/**
 * A widget page in the streamer's language (`lang`, `dir`, and its messages for the scripts).
 * Scripts are deferred so that /static/i18n.js, a module, runs before them.
 */
export function widgetDocument(t: Translator, kind: 'alerts' | 'goal' | 'poll', config: unknown, scripts: string[]): string {
  const tags: Html[] = scripts.map((src) => html`<script src="${src}" defer></script>`);
  return html`<!doctype html>
<html lang="${t.tag}" dir="${t.dir}" class="widget">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${t.t('layout.title', { title: t.t(`widget.title.${kind}`) })}</title>
<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/static/widget.css">
</head>
<body class="widget widget-${kind}">
<div id="stage" aria-live="polite"></div>
<script type="application/json" id="widget-config">${jsonForScript(config)}</script>
${scriptMessages(t, 'widget')}
${tags}
</body>
</html>`.value;
}

const queryToken = (request: FastifyRequest) => (request.query as Record<string, unknown>).token;

/** The token in the URL is a secret: never cached, never sent on as a Referer. */
function privateReply(reply: FastifyReply): FastifyReply {
  return reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
}

export async function widgetPages(app: FastifyInstance): Promise<void> {
  const { db } = app.ctx;
  /** The connection token plus a token for each of the streamer's widget channels, bound to the widget token presented. */
  const widgetRealtimeTokens = (request: FastifyRequest, userId: number) =>
    app.ctx.realtimeTokens.forWidget(userId, queryToken(request) as string, [widgetChannel(userId), goalChannel(userId), pollChannel(userId)], WIDGET_REALTIME_TTL_SECONDS);
  /** Page routes: an unknown or regenerated token is a plain 404 page. */
  const pageUser = async (request: FastifyRequest, reply: FastifyReply): Promise<UserRow | null> => {
    const user = await userForWidgetToken(db, queryToken(request));
    if (!user) {
      const t = await translator(visitorLocale(request));
      privateReply(reply).status(404).type('text/html; charset=utf-8').send(errorPage(404, t.t('widget.invalid_link'), t));
      return null;
    }
    // The overview's checklist: a widget page opened with the streamer's token means it is in OBS.
    await recordMilestone(db, user.id, 'widget_added');
    return user;
  };
  /** API routes: 401 JSON, which the page's centrifuge getToken turns into "stop reconnecting". */
  const apiUser = async (request: FastifyRequest, reply: FastifyReply): Promise<UserRow | null> => {
    const user = await userForWidgetToken(db, queryToken(request));
    if (!user) {
      sendJsonError(privateReply(reply), 401, { message: 'This widget token is not valid.' });
      return null;
    }
    privateReply(reply);
    return user;
  };

  app.get('/widget/alerts', async (request, reply) => {
    const user = await pageUser(request, reply);
    if (!user) return reply;
    const [variations, rates, realtime] = await Promise.all([listVariations(db, user.id), currentRates(db), widgetRealtimeTokens(request, user.id)]);
    // Sale amounts arrive in the sale's currency; minimum amounts are in the streamer's.
    const toUserCurrency: Record<string, number> = {};
    for (const c of INPUT_CURRENCIES) {
      try {
        toUserCurrency[c] = crossRate(c, user.currency, rates);
      } catch {
        // No rate for this currency: the widget compares such sales unconverted.
      }
    }
    const channel = widgetChannel(user.id);
    const config = {
      token: queryToken(request),
      connectionToken: realtime.connection_token,
      channel,
      channelToken: realtime.channels[channel],
      userCurrency: user.currency,
      toUserCurrency,
      variations,
      tokenCheckMs: WIDGET_TOKEN_CHECK_MS,
    };
    return privateReply(reply).type('text/html; charset=utf-8').send(
      widgetDocument(await streamerTranslator(user), 'alerts', config, [...COMMON_SCRIPTS, '/static/widget-alerts.js']),
    );
  });

  app.get('/widget/goal', async (request, reply) => {
    const user = await pageUser(request, reply);
    if (!user) return reply;
    const pinned = pinnedGoalId(request);
    const [goal, realtime] = await Promise.all([currentGoal(user.id, pinned), widgetRealtimeTokens(request, user.id)]);
    const channel = goalChannel(user.id);
    const config = { token: queryToken(request), connectionToken: realtime.connection_token, channel, channelToken: realtime.channels[channel], goalId: pinned, goal, tokenCheckMs: WIDGET_TOKEN_CHECK_MS };
    return privateReply(reply).type('text/html; charset=utf-8').send(
      widgetDocument(await streamerTranslator(user), 'goal', config, [...COMMON_SCRIPTS, '/static/widget-goal.js']),
    );
  });

  app.get('/widget/poll', async (request, reply) => {
    const user = await pageUser(request, reply);
    if (!user) return reply;
    const [poll, realtime] = await Promise.all([getActivePoll(db, user.id), widgetRealtimeTokens(request, user.id)]);
    const channel = pollChannel(user.id);
    const config = { token: queryToken(request), connectionToken: realtime.connection_token, channel, channelToken: realtime.channels[channel], poll: poll && publicPoll(poll), tokenCheckMs: WIDGET_TOKEN_CHECK_MS };
    return privateReply(reply).type('text/html; charset=utf-8').send(
      widgetDocument(await streamerTranslator(user), 'poll', config, [...COMMON_SCRIPTS, '/static/widget-poll.js']),
    );
  });

  app.get('/widget/api/token', async (request, reply) => {
    const user = await apiUser(request, reply);
    if (!user) return reply;
    return reply.type('application/json').send(await widgetRealtimeTokens(request, user.id));
  });

  app.get('/widget/api/unshown', async (request, reply) => {
    const user = await apiUser(request, reply);
    if (!user) return reply;
    return reply.type('application/json').send({ data: await unshownAlerts(db, user) });
  });

  app.post('/widget/api/shown', async (request, reply) => {
    const user = await apiUser(request, reply);
    if (!user) return reply;
    const body = (request.body ?? {}) as Record<string, unknown>;
    return reply.type('application/json').send({ data: await markShown(db, user.id, body.type, body.id) });
  });

  app.get('/widget/api/variations', async (request, reply) => {
    const user = await apiUser(request, reply);
    if (!user) return reply;
    return reply.type('application/json').send({ data: await listVariations(db, user.id) });
  });

  app.get('/widget/api/goal', async (request, reply) => {
    const user = await apiUser(request, reply);
    if (!user) return reply;
    return reply.type('application/json').send({ data: await currentGoal(user.id, pinnedGoalId(request)) });
  });

  app.get('/widget/api/poll', async (request, reply) => {
    const user = await apiUser(request, reply);
    if (!user) return reply;
    const poll = await getActivePoll(db, user.id);
    return reply.type('application/json').send({ data: poll && publicPoll(poll) });
  });

  /** `?goal=<id>` pins the widget to one goal; otherwise it follows the newest running goal. */
  function pinnedGoalId(request: FastifyRequest): number | null {
    const raw = (request.query as Record<string, unknown>).goal;
    return typeof raw === 'string' && /^[1-9]\d{0,15}$/.test(raw) ? Number(raw) : null;
  }

  async function currentGoal(userId: number, pinned: number | null) {
    if (pinned !== null) {
      try {
        return await getGoal(db, pinned, { userId });
      } catch {
        return null;
      }
    }
    const [newest] = await listGoals(db, userId, { state: 'active', limit: 1 });
    return newest ?? null;
  }
}

/** The spec §2 poll fields only (the `$polls:` payload shape), so page data and events agree. */
function publicPoll(poll: { id: number; is_active: number; title: string; allow_user_options: number; type: string; options: unknown[] }) {
  return { id: poll.id, is_active: poll.is_active, title: poll.title, allow_user_options: poll.allow_user_options, type: poll.type, options: poll.options };
}
