import http from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/** What Node's HTTP parser reports when a request cannot be read as HTTP at all. */
interface ParserError extends Error {
  code?: string;
  reason?: string;
}

// A refused connection is not kept for a second request: it is half-closed after the answer and
// dropped for good if the client has not hung up by then.
const LINGER_MS = 1000;

function describe(error: ParserError): { status: number; message: string } {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return { status: 408, message: 'The request took too long to arrive; send it again.' };
  if (error.code === 'HPE_HEADER_OVERFLOW') return { status: 431, message: 'The request headers are too large (16 KB in all at most); send fewer or shorter headers.' };
  const reason = error.reason ? ` (${error.reason.replace(/[^\x20-\x7e]/g, '')})` : '';
  return { status: 400, message: `The request is not valid HTTP${reason}; fix its request line or headers and send it again.` };
}

/**
 * Answers what Node's HTTP parser refuses (bad header characters, oversized headers, a request that
 * never completes) in the compatibility.md §1 shape and says `Connection: close`. Fastify's default
 * writes no Connection header and destroys the socket, so a client with a connection pool could
 * hand its next request to a socket that is already going away and get "socket hang up" instead
 * of an answer; the header tells every HTTP client not to reuse the connection.
 */
export function clientErrorHandler(this: FastifyInstance, error: ParserError, socket: Socket): void {
  // A reset connection has nobody to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const { status, message } = describe(error);
  this.log.debug({ err: error }, 'unparsable request refused');
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify({ message });
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}
