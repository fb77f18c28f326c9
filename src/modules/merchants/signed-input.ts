import { Type, type Static, type TObject, type TSchema } from 'typebox';
import { englishText, msg, ValidationError, type FieldMessages, type Message } from '../../domain/errors.js';
import { urlMessage } from '../custom-alerts/custom-alerts.service.js';
import { MAX_MINOR } from '../../domain/money.js';

/**
 * Validation of Merchandise API parameters from the route's TypeBox schemas — the same schemas
 * the OpenAPI document shows, so the two cannot disagree. It runs after the signature check, on a
 * copy: the signature covers the values exactly as received (compatibility.md §3), and those are never
 * touched.
 *
 * Every problem is reported at once, in Laravel's words and shape (compatibility.md §1:
 * `{message, errors: {field: [...]}}`, nested fields dotted: `title.en_US`).
 *
 * Wire rules, the same for form, multipart and JSON bodies and the query string:
 * - an empty string or null is "not given" (Laravel's ConvertEmptyStringsToNull) — a required
 *   field then fails as missing; a field whose schema admits null is cleared;
 * - numeric fields take a number or its decimal text (`12`, `12.50`): form bodies carry only text;
 *   text fields take a JSON number as its decimal text (`external_id: 123`);
 * - parameters the schema does not name are signed but otherwise ignored.
 */

type JsonSchema = Record<string, unknown> & { type?: unknown; anyOf?: JsonSchema[]; properties?: Record<string, JsonSchema>; additionalProperties?: unknown };

// Field types with their own wording in errors.
const HTTP_URL = '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s/?#]+\\S*$';
const PATTERN_MESSAGES: Record<string, (field: string) => Message> = { [HTTP_URL]: (field) => urlMessage(`${field} field`, 'url') };

/** An http(s) URL of at most `maxLength` characters. */
export const httpUrl = (maxLength: number, description: string) => Type.String({ maxLength, pattern: HTTP_URL, description });

/** A non-negative amount with at most two decimals (the minor unit, spec §2 currencies). */
export const money = (description: string) => Type.Number({ minimum: 0, maximum: MAX_MINOR / 100, multipleOf: 0.01, description });

/** A `money` value, once validated, in minor units (rounding only removes binary noise: 0.29 × 100). */
export const toMinorUnits = (value: number): number => Math.round(value * 100);

/** A 0/1 flag (spec §3). */
export const flag = (description: string) => Type.Integer({ minimum: 0, maximum: 1, default: 0, description });

/**
 * A field that may be cleared: null (or an empty string, by the wire rules above) clears it. One
 * schema with a type list (not a union), so the document shows its limits where readers look.
 */
export const clearable = <T extends TSchema>(schema: T) => {
  const { type, ...rest } = schema as unknown as JsonSchema;
  return Type.Unsafe<Static<T> | null>({ ...rest, type: [type, 'null'] });
};

const DECIMAL_TEXT = /^\s*-?\d{1,20}(\.\d{1,20})?\s*$/;

function admits(schema: JsonSchema, type: string): boolean {
  if (schema.type === type || (Array.isArray(schema.type) && schema.type.includes(type))) return true;
  return Array.isArray(schema.anyOf) && schema.anyOf.some((branch) => admits(branch, type));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** How the wire rules treat one property, worked out once from its schema. */
interface Plan {
  nullable: boolean;
  numeric: boolean;
  text: boolean;
  /** Nested object: its own plan, and whether unknown keys stay (to be reported) or go. */
  object: { plans: Map<string, Plan>; keepUnknown: boolean } | null;
}

function planOf(schema: JsonSchema): Map<string, Plan> {
  const plans = new Map<string, Plan>();
  for (const [key, property] of Object.entries(schema.properties ?? {})) {
    plans.set(key, {
      nullable: admits(property, 'null'),
      numeric: admits(property, 'number') || admits(property, 'integer'),
      text: admits(property, 'string'),
      object: admits(property, 'object') ? { plans: planOf(property), keepUnknown: property.additionalProperties === false } : null,
    });
  }
  return plans;
}

/** The wire rules: a new object holding what the schema names, empty values dropped, numeric text as numbers. */
function normalize(plans: Map<string, Plan>, params: Record<string, unknown>, keepUnknown: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(params)) {
    const value = params[key];
    const plan = plans.get(key);
    if (!plan) {
      // Kept to be reported; defined rather than assigned, so a JSON `__proto__` key stays a key.
      if (keepUnknown) Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
      continue;
    }
    if (value === undefined || value === null || value === '') {
      if (plan.nullable) out[key] = null;
      continue;
    }
    if (typeof value === 'string' && plan.numeric && DECIMAL_TEXT.test(value)) out[key] = Number(value);
    else if (typeof value === 'number' && !plan.numeric && plan.text && Number.isFinite(value)) out[key] = String(value);
    else if (plan.object && isPlainObject(value)) out[key] = normalize(plan.object.plans, value, plan.object.keepUnknown);
    else out[key] = value;
  }
  return out;
}

function resolve(schema: JsonSchema, pointer: string): JsonSchema | undefined {
  let node: unknown = schema;
  for (const part of pointer.replace(/^#\/?/, '').split('/').filter(Boolean)) {
    node = isPlainObject(node) || Array.isArray(node) ? (node as Record<string, unknown>)[part.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
  }
  return isPlainObject(node) ? (node as JsonSchema) : undefined;
}

function fieldOf(instancePath: string, child?: string): string {
  const parts = instancePath.split('/').slice(1).map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (child !== undefined) parts.push(child);
  return parts.join('.');
}

const TYPES = new Set(['string', 'integer', 'number', 'array', 'boolean']);

interface Issue {
  keyword: string;
  schemaPath: string;
  instancePath: string;
  params: Record<string, unknown>;
}

/** Laravel's wording for one schema failure; null for failures another message already covers. */
function describe(schema: JsonSchema, issue: Issue, field: string): Message | null {
  const p = issue.params;
  switch (issue.keyword) {
    case 'required':
      return msg('err.field.required', { field });
    case 'type': {
      const type = String(Array.isArray(p.type) ? p.type.find((t) => t !== 'null') : p.type); // clearable: the non-null type
      if (type !== 'object') return TYPES.has(type) ? msg('err.signed.type', { field, type }) : msg('err.signed.type_other', { field, type });
      const object = resolve(schema, issue.schemaPath);
      const first = (object?.required as string[] | undefined)?.[0] ?? Object.keys(object?.properties ?? {})[0] ?? 'key';
      return msg('err.signed.keyed_array', { field, first });
    }
    case 'enum':
      return msg('err.signed.enum', { field, list: (p.allowedValues as unknown[]).join(', ') });
    case 'maxLength':
      return msg('err.field.max_chars', { field, max: String(p.limit) });
    case 'minLength':
      return msg('err.field.min_chars', { field, min: String(p.limit) });
    case 'minimum':
    case 'exclusiveMinimum':
      return msg('err.field.min_value', { field, min: String(p.limit) });
    case 'maximum':
    case 'exclusiveMaximum':
      return msg('err.field.max_value', { field, max: String(p.limit) });
    case 'multipleOf':
      return p.multipleOf === 0.01 ? msg('err.signed.decimals', { field }) : msg('err.signed.multiple_of', { field, step: String(p.multipleOf) });
    case 'pattern':
      return PATTERN_MESSAGES[String(p.pattern)]?.(field) ?? msg('err.field.format', { field });
    case 'boolean': {
      // `additionalProperties: false` names each unknown key: say which keys are accepted.
      const parent = resolve(schema, issue.schemaPath.replace(/\/additionalProperties$/, ''));
      const keys = Object.keys(parent?.properties ?? {});
      const key = field.slice(field.lastIndexOf('.') + 1);
      return keys.length ? msg('err.signed.key_not_accepted', { key, list: keys.join(', ') }) : msg('err.signed.field_not_accepted', { field });
    }
    case 'additionalProperties':
      return null; // reported key by key ('boolean' above)
    default:
      return msg('err.field.invalid', { field });
  }
}

export type Problems = FieldMessages;

/** A compiled check of one part of a request (body, query or path) against its schema. */
export interface ParamsCheck<T extends TObject> {
  /** The normalized parameters, or every problem found. */
  run(params: unknown): Promise<{ value: Static<T>; problems: null } | { value: null; problems: Problems }>;
}

type Validator = { Check(value: unknown): boolean; Errors(value: unknown): unknown[] };

// TypeBox's compiler is as big as the rest of typebox: it is loaded when the first Merchandise API
// request is validated, not at every start of a server that may never get one.
let compiler: Promise<(schema: TSchema) => Validator> | undefined;
const compile = (schema: TSchema) => (compiler ??= import('typebox/compile').then((m) => m.Compile as (schema: TSchema) => Validator)).then((c) => c(schema));

/**
 * Compiled on first use, once per route. Problems are collected property by property (each has
 * its own validator): TypeBox stops listing errors after a few per call, and one bad title must
 * not hide a missing price.
 */
export function paramsCheck<T extends TObject>(schema: T): ParamsCheck<T> {
  const json = schema as unknown as JsonSchema;
  const plans = planOf(json);
  const required = new Set((json.required as string[] | undefined) ?? []);
  let validators: Promise<{ whole: Validator; properties: Array<{ key: string; property: JsonSchema; validator: Validator }> }> | undefined;
  const compiled = () =>
    (validators ??= (async () => ({
      whole: await compile(schema),
      properties: await Promise.all(Object.entries(json.properties ?? {}).map(async ([key, property]) => ({ key, property, validator: await compile(property as unknown as TSchema) }))),
    }))());
  return {
    async run(params) {
      const value = normalize(plans, isPlainObject(params) ? params : {}, false);
      const { whole, properties } = await compiled();
      if (whole.Check(value)) return { value: value as Static<T>, problems: null };
      const problems: Problems = {};
      for (const { key, property, validator } of properties) {
        if (value[key] === undefined) {
          if (required.has(key)) problems[key] = [msg('err.field.required', { field: key })];
          continue;
        }
        if (validator.Check(value[key])) continue;
        for (const issue of validator.Errors(value[key]) as Issue[]) {
          const names = issue.keyword === 'required' ? (issue.params.requiredProperties as string[]) : [undefined];
          for (const name of names) {
            const field = fieldOf(`/${key.replace(/~/g, '~0').replace(/\//g, '~1')}${issue.instancePath}`, name);
            const message = problems[field]?.length && issue.keyword === 'anyOf' ? null : describe(property, issue, field);
            if (message && !problems[field]?.some((m) => englishText(m) === englishText(message))) (problems[field] ??= []).push(message);
          }
        }
      }
      return { value: null, problems };
    },
  };
}

/** Runs several checks (path, query, body) and throws one ValidationError listing every problem. */
export async function checkAll(parts: ReadonlyArray<[check: ParamsCheck<TObject> | undefined, params: unknown, assign: (value: unknown) => void]>): Promise<void> {
  let problems: Problems | null = null;
  const values: Array<[(value: unknown) => void, unknown]> = [];
  for (const [check, params, assign] of parts) {
    if (!check) continue;
    const result = await check.run(params);
    if (result.problems) problems = { ...(problems ?? {}), ...result.problems };
    else values.push([assign, result.value]);
  }
  if (problems) throw new ValidationError(problems);
  for (const [assign, value] of values) assign(value);
}
