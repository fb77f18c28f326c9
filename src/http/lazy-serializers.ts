import { createRequire } from 'node:module';
import type { SerializerFactory } from '@fastify/fast-json-stringify-compiler';

/**
 * Fastify's own response serializer compiler (fast-json-stringify), loaded, and each route's
 * serializer built, on the first response it serializes instead of at start-up. Fastify builds one
 * for every response schema of every route while the server gets ready; that was the largest single
 * share of `serve`'s start-up CPU (Ajv resolving each schema's references), although most routes
 * answer nothing in a process's first seconds. The serializer built later is the one Fastify would
 * have built (same schema, same shared schemas, same options), so responses keep their shape and
 * properties outside the schema are still left out; a route pays its build once, on its first
 * response. Used as `schemaController.compilersFactory.buildSerializer` (src/app.ts).
 */
export function lazySerializers(): SerializerFactory {
  let select: SerializerFactory | undefined;
  return (externalSchemas, options) => {
    let compile: ReturnType<SerializerFactory> | undefined;
    return (route) => {
      let serialize: ((doc: unknown) => string) | undefined;
      return (doc: unknown) => (serialize ??= (compile ??= (select ??= loadSerializerCompiler()())(externalSchemas, options))(route))(doc);
    };
  };
}

/**
 * `require` of a bundled CommonJS package runs it on that call, not when dist/ loads (esbuild,
 * scripts/build.js); src/ run through tsx has no `require` in ES modules and loads it from node_modules.
 */
function loadSerializerCompiler(): () => SerializerFactory {
  const compiler = typeof require === 'function' ? require('@fastify/fast-json-stringify-compiler') : createRequire(import.meta.url)('@fastify/fast-json-stringify-compiler');
  return compiler.SerializerSelector;
}
