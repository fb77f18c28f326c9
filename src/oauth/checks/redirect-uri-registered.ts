import { msg } from '../../i18n/messages.js';
import { required, type AuthorizeContext } from '../context.js';
import { AuthorizePageError, InvalidRequestError } from '../errors.js';
import { stringParam } from '../params.js';
import type { Check } from './check.js';

/**
 * RFC 9700 §4.1.3 / §2.1: exact string match against a registered URI. Missing with exactly one
 * registered → that one (RFC 6749 §3.1.2.3, compatibility.md §4). Anything else is a page, never a redirect.
 */
export const redirectUriRegistered: Check<AuthorizeContext> = {
  name: 'redirect-uri-registered',
  run(ctx) {
    const client = required(ctx.client, 'client');
    let given: string | undefined;
    try {
      given = stringParam(ctx.params, 'redirect_uri');
    } catch (err) {
      if (err instanceof InvalidRequestError) throw new AuthorizePageError(msg('err.oauth.param_malformed', { name: 'redirect_uri', hint: err.hint }));
      throw err;
    }
    if (given === undefined) {
      if (client.redirectUris.length !== 1) throw new AuthorizePageError(msg('err.oauth.redirect_uri_ambiguous'));
      ctx.redirectUri = client.redirectUris[0];
      ctx.redirectUriGiven = false;
      return;
    }
    if (!client.redirectUris.includes(given)) throw new AuthorizePageError(msg('err.oauth.redirect_uri_unregistered'));
    ctx.redirectUri = given;
    ctx.redirectUriGiven = true;
  },
};
