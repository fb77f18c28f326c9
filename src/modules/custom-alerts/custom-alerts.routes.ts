import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { FastifyRequest } from 'fastify';
import { apiErrorResponses, MessageBody, needsScope } from '../../api/schemas.js';
import { requireToken } from '../../oauth/bearer.js';
import { CustomAlertBody, CustomAlertResource } from './custom-alerts.schemas.js';
import { createCustomAlert } from './custom-alerts.service.js';

const SCOPE = 'oauth-custom_alert-store';

/**
 * Spec 4.3 fields are all optional and clients send "none" as an empty form field or a JSON null
 * (Laravel turns both into null), so both are dropped before validation. A missing body is an
 * empty one.
 */
async function dropEmptyFields(request: FastifyRequest): Promise<void> {
  const body = request.body;
  if (body === undefined || body === null) {
    request.body = {};
    return;
  }
  if (typeof body !== 'object' || Array.isArray(body)) return;
  const fields = body as Record<string, unknown>;
  for (const key of Object.keys(fields)) if (fields[key] === null || fields[key] === '') delete fields[key];
}

export const customAlertRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/custom_alert',
    {
      schema: {
        summary: 'Send a custom alert to the authorized user’s broadcast',
        description:
          'Shown by an alerts-widget variation of the type Custom alerts. `external_id` is unique per application and streamer; reusing one is a 400 on `external_id`.',
        tags: ['Custom alerts'],
        security: needsScope(SCOPE),
        consumes: ['application/x-www-form-urlencoded', 'multipart/form-data', 'application/json'],
        body: CustomAlertBody,
        response: {
          201: Type.Object({ data: CustomAlertResource }, { description: 'The stored custom alert: `{data: <custom alert>}`.' }),
          ...apiErrorResponses(SCOPE),
          413: { ...MessageBody, description: 'The body is over the size limit.' },
        },
      },
      onRequest: requireToken(SCOPE),
      preValidation: dropEmptyFields,
    },
    async (request, reply) => {
      const auth = request.auth!;
      const body = request.body;
      const data = await createCustomAlert(app.ctx.db, {
        userId: auth.userId!,
        clientId: auth.clientId,
        externalId: body.external_id,
        header: body.header,
        message: body.message,
        isShown: body.is_shown,
        imageUrl: body.image_url,
        soundUrl: body.sound_url,
      });
      return reply.status(201).send({ data });
    },
  );
};
