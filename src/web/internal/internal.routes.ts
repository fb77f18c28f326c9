import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendJsonError } from '../../http/error-handler.js';
import { sessionUser } from '../../modules/accounts/accounts.service.js';
import { closeGoal, createGoal, getGoal, listGoals, updateGoal } from '../../modules/goals/goals.service.js';
import { closePoll, createPoll, getActivePoll, getPoll, listPolls, updatePoll } from '../../modules/polls/polls.service.js';
import { SESSION_COOKIE } from '../session.js';
import { GoalCreateBody, GoalUpdateBody, IdParams, ListQuery, PollCreateBody, PollUpdateBody } from './internal.schemas.js';

/**
 * The dashboard's JSON API (mounted at /internal): goals and polls of the logged-in streamer.
 *
 * - Authentication: the session cookie. It is resolved in onRequest, before the body is validated,
 *   so a logged-out caller always gets 401 `{"message":"Unauthenticated."}`, never a 400.
 * - CSRF: every write needs the token of `reply.generateCsrf()`, sent in `x-csrf-token`
 *   (GET /internal/session hands one out to scripts; pages embed one). Missing or wrong: 403.
 * - Errors: the INTEROP §1 shapes (400 `{message, errors}`, 404/409 `{message}`).
 * - Left out of the public OpenAPI document (`hide`): it is not part of the spec's API.
 * Donors vote in polls through their donation (donations.service), not here.
 */
export const internalRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    request.sessionUser = (await sessionUser(app.ctx.db, request.cookies[SESSION_COOKIE])) ?? null;
    if (!request.sessionUser) return sendJsonError(reply, 401, { message: 'Unauthenticated.' });
  });
  const write = { preValidation: app.csrfProtection };
  const userId = (request: FastifyRequest) => request.sessionUser!.id;

  app.get('/session', { schema: { hide: true } }, async (request, reply) => {
    const user = request.sessionUser!;
    return { data: { user: { id: user.id, code: user.code, name: user.name, currency: user.currency }, csrf_token: reply.generateCsrf() } };
  });

  // Goals
  app.get('/goals', { schema: { hide: true, querystring: ListQuery } }, async (request) => {
    const { state, limit, before } = request.query;
    return { data: await listGoals(app.ctx.db, userId(request), { state, limit, beforeId: before }) };
  });

  app.post('/goals', { ...write, schema: { hide: true, body: GoalCreateBody } }, async (request, reply) => {
    const b = request.body;
    const data = await createGoal(app.ctx.db, userId(request), { title: b.title, goalAmount: b.goal_amount, startAmount: b.start_amount, currency: b.currency, expiresAt: b.expires_at });
    return reply.status(201).send({ data });
  });

  app.get('/goals/:id', { schema: { hide: true, params: IdParams } }, async (request) => ({
    data: await getGoal(app.ctx.db, request.params.id, { userId: userId(request) }),
  }));

  app.patch('/goals/:id', { ...write, schema: { hide: true, params: IdParams, body: GoalUpdateBody } }, async (request) => {
    const b = request.body;
    return { data: await updateGoal(app.ctx.db, userId(request), request.params.id, { title: b.title, goalAmount: b.goal_amount, startAmount: b.start_amount, expiresAt: b.expires_at }) };
  });

  app.post('/goals/:id/close', { ...write, schema: { hide: true, params: IdParams } }, async (request) => ({
    data: await closeGoal(app.ctx.db, request.params.id, { userId: userId(request) }),
  }));

  // Polls
  app.get('/polls', { schema: { hide: true, querystring: ListQuery } }, async (request) => {
    const { state, limit, before } = request.query;
    return { data: await listPolls(app.ctx.db, userId(request), { state, limit, beforeId: before }) };
  });

  app.get('/polls/active', { schema: { hide: true } }, async (request) => ({ data: await getActivePoll(app.ctx.db, userId(request)) }));

  app.post('/polls', { ...write, schema: { hide: true, body: PollCreateBody } }, async (request, reply) => {
    const b = request.body;
    const data = await createPoll(app.ctx.db, userId(request), { title: b.title, type: b.type, options: b.options, allowUserOptions: b.allow_user_options, currency: b.currency });
    return reply.status(201).send({ data });
  });

  app.get('/polls/:id', { schema: { hide: true, params: IdParams } }, async (request) => ({
    data: await getPoll(app.ctx.db, request.params.id, { userId: userId(request) }),
  }));

  app.patch('/polls/:id', { ...write, schema: { hide: true, params: IdParams, body: PollUpdateBody } }, async (request) => {
    const b = request.body;
    return { data: await updatePoll(app.ctx.db, userId(request), request.params.id, { title: b.title, type: b.type, allowUserOptions: b.allow_user_options, addOptions: b.add_options }) };
  });

  app.post('/polls/:id/close', { ...write, schema: { hide: true, params: IdParams } }, async (request) => ({
    data: await closePoll(app.ctx.db, request.params.id, { userId: userId(request) }),
  }));
};
