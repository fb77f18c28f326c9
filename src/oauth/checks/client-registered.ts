import { msg } from '../../i18n/messages.js';
import { loadClient } from '../clients.js';
import type { AuthorizeContext } from '../context.js';
import { AuthorizePageError, InvalidRequestError } from '../errors.js';
import { parseClientId, stringParam } from '../params.js';
import type { Check } from './check.js';

/** The client must exist before anything may redirect to it (RFC 6749 §4.1.2.1): errors here are a page. */
export const clientRegistered: Check<AuthorizeContext> = {
  name: 'client-registered',
  async run(ctx) {
    let text: string | undefined;
    try {
      text = stringParam(ctx.params, 'client_id');
    } catch (err) {
      if (err instanceof InvalidRequestError) throw new AuthorizePageError(msg('err.oauth.param_malformed', { name: 'client_id', hint: err.hint }));
      throw err;
    }
    if (text === undefined) throw new AuthorizePageError(msg('err.oauth.no_client_id'));
    const id = parseClientId(text);
    const client = id === null ? undefined : await loadClient(ctx.db, id);
    if (!client) throw new AuthorizePageError(msg('err.oauth.unknown_client'));
    ctx.client = client;
  },
};
