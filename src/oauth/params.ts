import { Type, type TString } from 'typebox';
import { InvalidRequestError } from './errors.js';

/** A request's parameters (query string or parsed body), before any check has looked at them. */
export type Params = Record<string, unknown>;

/**
 * The authorization server's parameters, each a string schema with its longest accepted value.
 * The documented schemas (oauth.schemas.ts) are built from these, and `stringParam` holds every
 * value to its schema (a string, at most maxLength), so the OpenAPI document and the endpoints agree. Tokens and codes we issue are 43
 * characters; anything far longer is garbage and is refused before it reaches the database or a
 * hash. What a value must look like beyond that (a known grant type, a PKCE challenge…) is the
 * business of the named checks, which answer with the RFC 6749 error for it.
 */
const limited = (maxLength: number) => Type.String({ maxLength }) as TString & { maxLength: number };

export const PARAMETERS = {
  response_type: limited(50),
  grant_type: limited(100),
  client_id: limited(20),
  client_secret: limited(512),
  redirect_uri: limited(2000),
  scope: limited(1000),
  state: limited(2000),
  code: limited(512),
  code_challenge: limited(128),
  code_challenge_method: limited(10),
  code_verifier: limited(128),
  refresh_token: limited(512),
  token: limited(512),
  token_type_hint: limited(50),
  decision: limited(10),
};

export type ParameterName = keyof typeof PARAMETERS;

/** Longest value accepted per parameter, from PARAMETERS. */
export const MAX_LENGTH: Record<string, number> = Object.fromEntries(Object.entries(PARAMETERS).map(([name, schema]) => [name, schema.maxLength]));

/** Parameters not listed (none today) get the longest limit. */
const OTHER = limited(2000);

/**
 * One string parameter. RFC 6749 §3.1: an empty value counts as absent, and a parameter must not
 * appear more than once (an array here). Numbers are accepted as their decimal text (JSON bodies
 * send `client_id` as a number, compatibility.md §4).
 */
export function stringParam(params: Params, name: string): string | undefined {
  const value = params[name];
  if (value === undefined || value === null || value === '') return undefined;
  let text: string;
  if (typeof value === 'string') text = value;
  else if (typeof value === 'number' && Number.isFinite(value)) text = String(value);
  else if (Array.isArray(value)) throw new InvalidRequestError(name, `The \`${name}\` parameter must be given once`);
  else throw new InvalidRequestError(name, `The \`${name}\` parameter must be a string`);
  // The whole schema of a parameter is "a string of at most maxLength characters".
  const { maxLength } = (PARAMETERS as Record<string, typeof OTHER>)[name] ?? OTHER;
  if (text.length > maxLength) throw new InvalidRequestError(name, `The \`${name}\` parameter must not be longer than ${maxLength} characters`);
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
