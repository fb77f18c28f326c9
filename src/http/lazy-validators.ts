import type { Ajv, ValidateFunction } from 'ajv';

/**
 * An Ajv plugin that compiles each route's validator on its first use instead of at start-up.
 * Fastify compiles every body, query, params and headers schema while the server gets ready; that
 * was a large share of `serve`'s start-up CPU although most routes are not called in a process's
 * first seconds. A request pays its route's compile once (well under a millisecond per schema).
 *
 * Schemas with an `$id` compile at once: Fastify's compiler returns the stored validator for an
 * `$id` it has already compiled, and Ajv refuses to compile one `$id` twice. Registered after
 * `strictNumberCoercion`, so the validator compiled later is the strict one.
 */
export function lazyValidators(ajv: Ajv): Ajv {
  const compile = ajv.compile.bind(ajv);
  ajv.compile = (<T>(schema: object, meta?: boolean): ValidateFunction<T> => {
    if ((schema as { $id?: unknown }).$id !== undefined) return compile<T>(schema, meta);
    let validate: ValidateFunction<T> | undefined;
    const lazy = ((data: unknown, ...rest: unknown[]) => {
      validate ??= compile<T>(schema, meta);
      const ok = (validate as (d: unknown, ...r: unknown[]) => boolean)(data, ...rest);
      lazy.errors = validate.errors;
      return ok;
    }) as ValidateFunction<T>;
    return lazy;
  }) as typeof ajv.compile;
  return ajv;
}
