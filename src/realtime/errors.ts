/**
 * Client errors of the Centrifuge protocol (compatibility.md §5 "Error codes"). A handler throws one of
 * these to answer the command with `{id, error:{code, message}}`; the connection stays open.
 */
export class ClientError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly temporary = false,
  ) {
    super(message);
    this.name = 'ClientError';
  }
}

export const ErrorInternal = new ClientError(100, 'internal server error', true);
export const ErrorUnauthorized = new ClientError(101, 'unauthorized');
export const ErrorUnknownChannel = new ClientError(102, 'unknown channel');
export const ErrorPermissionDenied = new ClientError(103, 'permission denied');
export const ErrorMethodNotFound = new ClientError(104, 'method not found');
export const ErrorAlreadySubscribed = new ClientError(105, 'already subscribed');
export const ErrorLimitExceeded = new ClientError(106, 'limit exceeded');
export const ErrorBadRequest = new ClientError(107, 'bad request');
export const ErrorNotAvailable = new ClientError(108, 'not available');
export const ErrorTokenExpired = new ClientError(109, 'token expired');
export const ErrorExpired = new ClientError(110, 'expired');
export const ErrorTooManyRequests = new ClientError(111, 'too many requests', true);
export const ErrorUnrecoverablePosition = new ClientError(112, 'unrecoverable position');
