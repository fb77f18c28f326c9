import { isDeepStrictEqual } from 'node:util';
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods, RouteHandlerMethod, RouteShorthandOptions } from 'fastify';

/** One route of a lazily loaded page module, declared where it is registered: method, URL and options (hooks, rate limit, body limits). */
export interface PageRoute {
  method: 'GET' | 'POST';
  url: string;
  options?: RouteShorthandOptions;
}

/** A page module as it is written: a Fastify plugin that declares its routes with their handlers. */
export type PageModule = (app: FastifyInstance) => Promise<void>;

/** A route as the page module declared it, handler included (what the first request runs). */
export interface DeclaredRoute extends PageRoute {
  handler: RouteHandlerMethod;
}

const keyOf = (method: string, url: string) => `${method} ${url}`;

/**
 * Runs a page module's plugin against a stand-in for `app` that records the routes it declares
 * instead of registering them (the routes are registered already, from the module's table);
 * everything else the module reads from `app` (`ctx`, `csrfProtection`, `createRateLimit`) is the
 * real instance's.
 */
export async function declaredRoutes(app: FastifyInstance, plugin: PageModule): Promise<DeclaredRoute[]> {
  const routes: DeclaredRoute[] = [];
  const shorthand = (method: 'GET' | 'POST') => (url: string, optionsOrHandler: RouteShorthandOptions | RouteHandlerMethod, handler?: RouteHandlerMethod) => {
    if (typeof optionsOrHandler === 'function') routes.push({ method, url, handler: optionsOrHandler });
    else routes.push({ method, url, options: optionsOrHandler, handler: handler! });
    return recorder;
  };
  const refuse = (name: string) => () => {
    throw new Error(`a lazily loaded page module cannot call app.${name}(): its routes are registered from its table in page-routes.ts, before it loads`);
  };
  const recorder: FastifyInstance = Object.create(app, {
    get: { value: shorthand('GET') },
    post: { value: shorthand('POST') },
    ...Object.fromEntries(['route', 'put', 'patch', 'delete', 'all', 'head', 'options', 'addHook', 'register', 'decorate', 'decorateRequest', 'decorateReply'].map((name) => [name, { value: refuse(name) }])),
  });
  await plugin(recorder);
  return routes;
}

/**
 * Registers a page module's routes from its table now and loads the module on the first request
 * to one of them: the server starts without importing, compiling and linking the pages' code (and
 * the build puts each module in a chunk of its own). One import per module, shared by its routes;
 * a failed import is not cached, so the next request tries again.
 */
export function lazyPages(name: string, load: () => Promise<PageModule>, table: (app: FastifyInstance) => PageRoute[]) {
  return async function lazyPagesPlugin(app: FastifyInstance): Promise<void> {
    let handlers: Promise<Map<string, RouteHandlerMethod>> | null = null;
    const loaded = () =>
      (handlers ??= load()
        .then((plugin) => declaredRoutes(app, plugin))
        .then((routes) => {
          // Options the module writes but the table lacks would silently not apply: refuse instead.
          const declared = routes.map(({ handler: _, ...route }) => route);
          if (!isDeepStrictEqual(declared, table(app))) throw new Error(`the ${name} page module's routes differ from its table in page-routes.ts: make them the same`);
          return new Map(routes.map((r) => [keyOf(r.method, r.url), r.handler]));
        })
        .catch((err) => {
          handlers = null;
          throw err;
        }));
    for (const route of table(app)) {
      const key = keyOf(route.method, route.url);
      app.route({
        ...route.options,
        method: route.method as HTTPMethods,
        url: route.url,
        async handler(this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
          const handler = (await loaded()).get(key);
          if (!handler) throw new Error(`the page module declares no handler for ${key} (page-routes.ts and the module disagree)`);
          return handler.call(this, request, reply);
        },
      });
    }
  };
}
