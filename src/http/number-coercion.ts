import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';

/** How a number is written when it arrives as text (query, path, form, multipart): plain decimal. */
const DECIMAL = /^\s*-?\d+(\.\d+)?\s*$/;

/**
 * Ajv's type coercion (`coerceTypes`) turns any text JavaScript reads as a number into one:
 * `1e309` and `Infinity` become Infinity — which Ajv's own integer, minimum and maximum checks then
 * let through, since they only test finite numbers — and `0x10`, `1e3` become 16 and 1000. Numbers
 * that arrive as text are taken only as plain decimals (as Laravel's `integer`/`numeric` rules read
 * them), so `?page=1e309` is a 400 like any other invalid page, never an Infinity in a query.
 *
 * An Ajv plugin: every validator Fastify compiles checks, after Ajv accepted the data, that each
 * top-level text value Ajv changed into a number was written as a plain decimal. Request parts are
 * flat (path, query, form and multipart fields); nested values keep Ajv's answer.
 */
export function strictNumberCoercion(ajv: Ajv): Ajv {
  const compile = ajv.compile.bind(ajv);
  ajv.compile = (<T>(schema: object, meta?: boolean): ValidateFunction<T> => {
    const validate = compile<T>(schema, meta);
    const strict = ((data: unknown, ...rest: unknown[]) => {
      const before = data && typeof data === 'object' && !Array.isArray(data) ? Object.entries(data as Record<string, unknown>) : [];
      const ok = (validate as (d: unknown, ...r: unknown[]) => boolean)(data, ...rest);
      strict.errors = validate.errors;
      if (!ok) return false;
      const wrong: ErrorObject[] = [];
      for (const [key, original] of before) {
        const now = (data as Record<string, unknown>)[key];
        const coerced = Array.isArray(now) && now.length === 1 && !Array.isArray(original) ? now[0] : now;
        if (typeof original === 'string' && typeof coerced === 'number' && (!DECIMAL.test(original) || !Number.isFinite(coerced))) {
          const declared = (schema as { properties?: Record<string, { type?: unknown }> }).properties?.[key]?.type;
          const type = declared === 'integer' ? 'integer' : 'number';
          wrong.push({ instancePath: `/${key}`, schemaPath: `#/properties/${key}/type`, keyword: 'type', params: { type }, message: `must be ${type}` });
        }
      }
      if (wrong.length === 0) return true;
      strict.errors = wrong;
      return false;
    }) as ValidateFunction<T>;
    Object.assign(strict, { schema: validate.schema, schemaEnv: validate.schemaEnv, source: validate.source });
    return strict;
  }) as typeof ajv.compile;
  return ajv;
}
