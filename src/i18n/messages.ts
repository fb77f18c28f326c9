import type en_US from './catalogs/en_US.js';
import type { MessageKey } from './catalogs/en_US.js';
import { english, type Translator } from './translator.js';

/**
 * What services say when they refuse something: a catalog key of the `err.` namespace and its
 * arguments. The API answers the English rendering (byte for byte what it always answered); pages
 * render the same code in their own language, so the two cannot drift apart.
 */
export type ErrorCode = Extract<MessageKey, `err.${string}`>;

type Trim<S extends string> = S extends ` ${infer R}` ? Trim<R> : S extends `${infer R} ` ? Trim<R> : S;
/** The name of the argument a `{` opens (`{max, plural, …}` → max), or never for `{# item}` option bodies. */
type OpenedName<R extends string> = R extends `${infer Head}}${string}`
  ? Head extends `${infer Name},${string}`
    ? Checked<Trim<Name>>
    : Checked<Trim<Head>>
  : never;
type Checked<N extends string> = N extends '' ? never : N extends `${string}${' ' | '#' | '{'}${string}` ? never : N;
/**
 * The ICU argument names of an English message, read from its literal type. An option body of a
 * single word (`{n, select, a {yes} other {no}}`) would read as an argument too: write option
 * bodies of error messages with a space, as they all are.
 */
export type ArgumentsOf<S extends string> = S extends `${string}{${infer Rest}` ? OpenedName<Rest> | ArgumentsOf<Rest> : never;

/** The arguments a code's English text needs: a missing or misspelt one is a compile error. */
export type ErrorParams<K extends ErrorCode> = { readonly [P in ArgumentsOf<(typeof en_US)[K]>]: ParamValue };

/** An argument: text and numbers as given, or a message (a field's label) rendered in the same language. */
export type ParamValue = string | number | Message;

export interface Message {
  readonly code: ErrorCode;
  readonly params: Readonly<Record<string, ParamValue>>;
}

/** A message: `msg('err.goal.not_found')`, `msg('err.field.max_chars', { field: 'title', max: 60 })`. */
export function msg<K extends ErrorCode>(code: K, ...params: [ArgumentsOf<(typeof en_US)[K]>] extends [never] ? [] : [ErrorParams<K>]): Message {
  return { code, params: (params[0] ?? {}) as Record<string, ParamValue> };
}

/** A message in the translator's language (a string it lacks is English). */
export function renderMessage(t: Translator, message: Message): string {
  const values: Record<string, string | number> = {};
  for (const [name, value] of Object.entries(message.params)) values[name] = typeof value === 'object' ? renderMessage(t, value) : value;
  return t.t(message.code, values);
}

/** The English text of a message: what the API, the CLI and the logs show. */
export function englishText(message: Message): string {
  return renderMessage(english(), message);
}
