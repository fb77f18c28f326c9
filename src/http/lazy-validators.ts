import { createRequire } from 'node:module';
import type { ValidatorFactory } from '@fastify/ajv-compiler';

type ValidatorCompiler = ReturnType<ValidatorFactory>;
type Validate = ReturnType<ValidatorCompiler> & { errors?: unknown };

/**
 * Fastify's own request validator compiler (@fastify/ajv-compiler: Ajv with ajv-formats and the
 * `ajv` options of src/app.ts), loaded with Ajv, and each route's validator compiled, on the
 * route's first request instead of at start-up. Fastify creates the Ajv instance and compiles every
 * body, query, params and headers schema while the server gets ready; loading Ajv and compiling
 * were a large share of `serve`'s start-up CPU although most routes are not called in a process's
 * first seconds. The validator compiled later is the one Fastify would have compiled (same schema,
 * shared schemas and options; a schema with an `$id` is compiled once and then taken from Ajv's
 * store, as Fastify's compiler does). Used as `schemaController.compilersFactory.buildValidator`.
 *
 * Fastify treats a compilers factory given in the options as custom, and then passes a route's
 * `headers` schema as written instead of with lower-cased property names: write header names in
 * lower case (HTTP/1.1 and HTTP/2 deliver them so).
 */
export function lazyValidators(): ValidatorFactory {
  let select: ValidatorFactory | undefined;
  return ((externalSchemas, options) => {
    let compiler: ValidatorCompiler | undefined;
    return ((route) => {
      let validate: Validate | undefined;
      const lazy = ((data: unknown) => {
        validate ??= (compiler ??= (select ??= loadAjvCompiler()())(externalSchemas, options))(route) as Validate;
        const ok = validate(data);
        lazy.errors = validate.errors;
        return ok;
      }) as Validate;
      return lazy;
    }) as ValidatorCompiler;
  }) as ValidatorFactory;
}

/**
 * `require` of a bundled CommonJS package runs it on that call, not when dist/ loads (esbuild,
 * scripts/build.js); src/ run through tsx has no `require` in ES modules and loads it from node_modules.
 */
function loadAjvCompiler(): () => ValidatorFactory {
  return typeof require === 'function' ? require('@fastify/ajv-compiler') : createRequire(import.meta.url)('@fastify/ajv-compiler');
}
