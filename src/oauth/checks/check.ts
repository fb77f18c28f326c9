/**
 * architecture.md convention 5: an endpoint is an ordered list of small named checks. A check throws an
 * OAuthError (or AuthorizePageError) to stop the request; it may fill the context for later checks.
 * The order is the contract: e.g. client and redirect_uri come before anything that may redirect.
 */
export interface Check<C> {
  readonly name: string;
  run(ctx: C): void | Promise<void>;
}

export async function runChecks<C>(checks: readonly Check<C>[], ctx: C): Promise<void> {
  for (const check of checks) await check.run(ctx);
}
