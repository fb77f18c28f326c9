import type { GrantType } from '../checks/grant-type-supported.js';
import { authorizationCodeGrant } from './authorization-code.js';
import { clientCredentialsGrant } from './client-credentials.js';
import type { Grant } from './grant.js';
import { refreshTokenGrant } from './refresh-token.js';

export const GRANTS: Readonly<Record<GrantType, Grant>> = {
  authorization_code: authorizationCodeGrant,
  refresh_token: refreshTokenGrant,
  client_credentials: clientCredentialsGrant,
};
