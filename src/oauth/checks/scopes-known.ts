import type { AuthorizeContext, TokenContext } from '../context.js';
import { InvalidRequestError, InvalidScopeError } from '../errors.js';
import { MAX_LENGTH, type Params } from '../params.js';
import { isScope, parseScopeParam } from '../scopes.js';
import type { Check } from './check.js';

/**
 * The `scope` parameter in any compatibility.md §4 encoding (space, `+`, `%20`, repeated keys, brackets);
 * undefined when absent. Only strings may appear, and not too many of them.
 */
export function readScopes(params: Params): string[] | undefined {
  const value = params.scope;
  if (value === undefined || value === null || value === '') return undefined;
  // Each value counts with one separator after it, except the last: a single `scope` string may be as long as params.ts allows.
  let total = -1;
  const visit = (v: unknown, depth: number): void => {
    if (typeof v === 'string') total += v.length + 1;
    else if (depth < 3 && Array.isArray(v)) v.forEach((x) => visit(x, depth + 1));
    else if (depth < 3 && v !== null && typeof v === 'object') Object.values(v).forEach((x) => visit(x, depth + 1));
    else throw new InvalidRequestError('scope', 'The `scope` parameter must be a space-delimited string of scopes');
  };
  visit(value, 0);
  if (total > MAX_LENGTH.scope!) throw new InvalidRequestError('scope', `The \`scope\` parameter must not be longer than ${MAX_LENGTH.scope} characters`);
  return parseScopeParam(value);
}

function unknownScopeError(scopes: readonly string[]): InvalidScopeError | null {
  const unknown = scopes.find((s) => !isScope(s));
  return unknown === undefined ? null : new InvalidScopeError(`Check the \`${unknown.slice(0, 100)}\` scope`);
}

/** Authorization request: every requested scope must be one of spec 5.2's six. */
export const authorizeScopesKnown: Check<AuthorizeContext> = {
  name: 'scopes-known',
  run(ctx) {
    ctx.scopes = readScopes(ctx.params) ?? [];
    const error = unknownScopeError(ctx.scopes);
    if (error) throw error;
  },
};

/** Token request (refresh narrowing, client_credentials): the same rule; absent stays undefined. */
export const tokenScopesKnown: Check<TokenContext> = {
  name: 'scopes-known',
  run(ctx) {
    ctx.requestedScopes = readScopes(ctx.params);
    const error = unknownScopeError(ctx.requestedScopes ?? []);
    if (error) throw error;
  },
};
