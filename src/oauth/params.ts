import { InvalidRequestError } from './errors.js';

/** A request's parameters (query string or parsed body), before any check has looked at them. */
export type Params = Record<string, unknown>;

/**
 * Longest value accepted per parameter. Tokens and codes we issue are 43 characters; anything far
 * longer is garbage and is refused before it reaches the database or a hash.
 */
export const MAX_LENGTH: Record<string, number> = {
  response_type: 50,
  grant_type: 100,
  client_id: 20,
  client_secret: 512,
  redirect_uri: 2000,
  scope: 1000,
  state: 2000,
  code: 512,
  code_challenge: 128,
  code_challenge_method: 10,
  code_verifier: 128,
  refresh_token: 512,
  token: 512,
  token_type_hint: 50,
  decision: 10,
};

/**
 * One string parameter. RFC 6749 §3.1: an empty value counts as absent, and a parameter must not
 * appear more than once (an array here). Numbers are accepted as their decimal text (JSON bodies
 * send `client_id` as a number, INTEROP §4).
 */
export function stringParam(params: Params, name: string): string | undefined {
  const value = params[name];
  if (value === undefined || value === null || value === '') return undefined;
  let text: string;
  if (typeof value === 'string') text = value;
  else if (typeof value === 'number' && Number.isFinite(value)) text = String(value);
  else if (Array.isArray(value)) throw new InvalidRequestError(name, `The \`${name}\` parameter must be given once`);
  else throw new InvalidRequestError(name, `The \`${name}\` parameter must be a string`);
  const max = MAX_LENGTH[name] ?? 2000;
  if (text.length > max) throw new InvalidRequestError(name, `The \`${name}\` parameter must not be longer than ${max} characters`);
  return text;
}

/** Like stringParam, but absence is an invalid_request too. */
export function requiredParam(params: Params, name: string): string {
  const value = stringParam(params, name);
  if (value === undefined) throw new InvalidRequestError(name);
  return value;
}

/** Parses a client_id: a positive decimal integer (string or number); null when it is not one. */
export function parseClientId(text: string): number | null {
  if (!/^[1-9]\d{0,15}$/.test(text)) return null;
  const id = Number(text);
  return Number.isSafeInteger(id) ? id : null;
}
