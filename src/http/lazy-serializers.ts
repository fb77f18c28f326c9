import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

type SerializerFactory = ReturnType<typeof SerializerSelector>;

/**
 * Fastify's own response serializer compiler (fast-json-stringify), building each route's
 * serializer on the first response it serializes instead of at start-up. Fastify builds one for
 * every response schema of every route while the server gets ready; that was the largest single
 * share of `serve`'s start-up CPU (Ajv resolving each schema's references), although most routes
 * answer nothing in a process's first seconds. The serializer built later is the one Fastify would
 * have built (same schema, same shared schemas, same options), so responses keep their shape and
 * properties outside the schema are still left out; a route pays its build once, on its first
 * response. Used as `schemaController.compilersFactory.buildSerializer` (src/app.ts).
 */
export function lazySerializers(): SerializerFactory {
  const build = SerializerSelector();
  return (externalSchemas, options) => {
    const compile = build(externalSchemas, options);
    return (route) => {
      let serialize: ((doc: unknown) => string) | undefined;
      return (doc: unknown) => (serialize ??= compile(route))(doc);
    };
  };
}
