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
      if (err instanceof InvalidRequestError) throw new AuthorizePageError(`The client_id parameter is malformed: ${err.hint}.`);
      throw err;
    }
    if (text === undefined) throw new AuthorizePageError('The request has no client_id, so we cannot tell which application is asking.');
    const id = parseClientId(text);
    const client = id === null ? undefined : await loadClient(ctx.db, id);
    if (!client) throw new AuthorizePageError('No application is registered with this client_id.');
    ctx.client = client;
  },
};
