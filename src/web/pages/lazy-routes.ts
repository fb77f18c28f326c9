import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods, RouteHandlerMethod, RouteShorthandOptions } from 'fastify';

/**
 * One route of a lazily loaded page module as its table declares it (page-routes.ts, the only
 * declaration): method, URL and options (hooks, rate limit, body limits).
 */
export interface PageRoute {
  method: 'GET' | 'POST';
  url: string;
  options?: RouteShorthandOptions;
}

/**
 * A page module as it is written: a Fastify plugin that gives each route of its table its handler,
 * `app.get(url, handler)` / `app.post(url, handler)`. No options: they are the table's.
 */
export type PageModule = (app: FastifyInstance) => Promise<void>;

const keyOf = (method: string, url: string) => `${method} ${url}`;

/**
 * Runs a page module's plugin against a stand-in for `app` that records its handlers by route
 * instead of registering them (the routes are registered already, from the table); everything else
 * the module reads from `app` (`ctx`, `csrfProtection`) is the real instance's.
 */
export async function handlersOf(app: FastifyInstance, plugin: PageModule): Promise<Map<string, RouteHandlerMethod>> {
  const handlers = new Map<string, RouteHandlerMethod>();
  const shorthand = (method: 'GET' | 'POST') => (url: string, handler: unknown) => {
    if (typeof handler !== 'function') throw new Error(`${method} ${url}: a page module gives only the handler; the route's options are its table's, in page-routes.ts`);
    handlers.set(keyOf(method, url), handler as RouteHandlerMethod);
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
  return handlers;
}

/**
 * Registers a page module's routes from its table now and loads the module on the first request
 * to one of them: the server starts without importing, compiling and linking the pages' code. One
 * import per module, shared by its routes; a failed import is not cached, so the next request
 * tries again. A module that handles other routes than its table's is refused (a 500 naming both).
 */
export function lazyPages(name: string, load: () => Promise<PageModule>, table: (app: FastifyInstance) => PageRoute[]) {
  return async function lazyPagesPlugin(app: FastifyInstance): Promise<void> {
    const routes = table(app);
    const keys = routes.map((r) => keyOf(r.method, r.url));
    let handlers: Promise<Map<string, RouteHandlerMethod>> | null = null;
    const loaded = () =>
      (handlers ??= load()
        .then((plugin) => handlersOf(app, plugin))
        .then((found) => {
          const missing = keys.filter((key) => !found.has(key));
          const extra = [...found.keys()].filter((key) => !keys.includes(key));
          if (missing.length + extra.length > 0) {
            throw new Error(`the ${name} page module's routes differ from its table in page-routes.ts (no handler: ${missing.join(', ') || 'none'}; not in the table: ${extra.join(', ') || 'none'}): make them the same`);
          }
          return found;
        })
        .catch((err) => {
          handlers = null;
          throw err;
        }));
    routes.forEach((route, i) => {
      const key = keys[i]!;
      app.route({
        ...route.options,
        method: route.method as HTTPMethods,
        url: route.url,
        async handler(this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
          return (await loaded()).get(key)!.call(this, request, reply);
        },
      });
    });
  };
}
