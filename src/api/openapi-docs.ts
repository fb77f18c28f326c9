import swagger, { type SwaggerOptions } from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyInstance, type RouteOptions } from 'fastify';

// Imported by openapi.ts on the first request for /openapi.json or /docs, never at start.

/** `app.swagger` of an instance with @fastify/swagger: the document, or its YAML text with `{ yaml: true }`. */
type DocumentFunction = FastifyInstance['swagger'];
type Hook = (...args: unknown[]) => unknown;

/**
 * @fastify/swagger's document function for the routes registerOpenApi collected. The plugin is
 * run on a stand-in of the instance it would have been registered on at start: it adds its
 * onRoute and onReady hooks and its `swagger` decorator to that stand-in, and the stand-in's
 * hooks are then given what the application's hooks were given — every route object in the order
 * added, and the shared schemas once ready. The document is the one the plugin would have made,
 * route for route (test/api/openapi.test.ts checks it against the route table).
 */
export function openApiDocumentFunction(routes: readonly RouteOptions[], sharedSchemas: Record<string, unknown>, options: SwaggerOptions): DocumentFunction {
  const hooks = new Map<string, Hook>();
  let swaggerFunction: DocumentFunction | undefined;
  const standIn = {
    addHook: (name: string, hook: Hook) => void hooks.set(name, hook),
    decorate: (name: string, value: DocumentFunction) => void (name === 'swagger' && (swaggerFunction = value)),
    getSchemas: () => sharedSchemas,
  };
  let failed: unknown;
  swagger.fastifySwagger(standIn as unknown as FastifyInstance, options, (err?: Error) => void (failed = err));
  if (failed) throw failed;
  const onRoute = hooks.get('onRoute');
  const onReady = hooks.get('onReady');
  if (!onRoute || !onReady || !swaggerFunction) throw new Error('@fastify/swagger no longer adds the onRoute and onReady hooks and the swagger decorator that openapi-docs.ts relies on');
  for (const route of routes) onRoute(route);
  onReady((err?: Error) => void (failed = err));
  if (failed) throw failed;
  return swaggerFunction;
}

/**
 * Swagger UI on a Fastify instance of its own, at /docs like the application's routes that pass
 * requests to it (openapi.ts). Its document is the application's. Swagger UI requires
 * @fastify/swagger in its instance: that one is registered under another decorator name and
 * documents nothing (this instance has no routes of the application).
 */
export async function swaggerUiServer(document: DocumentFunction): Promise<FastifyInstance> {
  const ui = Fastify({ logger: false });
  await ui.register(swagger, { openapi: {}, decorator: 'swaggerOfThisInstance' });
  ui.decorate('swagger', document);
  await ui.register(swaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: true, persistAuthorization: false } });
  await ui.ready();
  return ui;
}
