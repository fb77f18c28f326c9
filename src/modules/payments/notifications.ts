import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ProviderId } from '../../domain/payment-providers.js';
import { msg } from '../../domain/errors.js';
import { UnparsableInput } from '../../http/body-parsers.js';
import type { PaymentOutcome, RejectionReason } from './payments.service.js';

/**
 * What the provider-notification routes share: the raw request body (every provider signs the
 * bytes it sent, so nothing may parse and re-encode them first), one log line per refused
 * notification naming the provider's payment id, and the answers to each outcome.
 */
export function keepRawBodies(app: FastifyInstance): void {
  // Encapsulated: only the routes of the plugin that calls this get unparsed bodies.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, async (_request: FastifyRequest, body: string) => body);
}

/** The body exactly as received; a multipart body (which the root parses into fields) is refused. */
export function rawBody(request: FastifyRequest): string {
  if (request.body === undefined || request.body === null) return '';
  if (typeof request.body !== 'string') throw new UnparsableInput('body', msg('err.body.notification_multipart'));
  return request.body;
}

/** Flat form fields of an application/x-www-form-urlencoded body (YooMoney, Ko-fi). */
export function formFields(request: FastifyRequest): URLSearchParams {
  return new URLSearchParams(rawBody(request));
}

export function logRefusal(request: FastifyRequest, provider: ProviderId, paymentId: string | null, reason: string): void {
  request.log.warn({ provider, paymentId, reason }, 'payment notification refused');
}

const REJECTIONS: Record<RejectionReason, { status: number; message: string }> = {
  unknown_reference: { status: 200, message: 'No pending donation has this reference; nothing was recorded.' },
  other_streamer: { status: 422, message: 'The reference belongs to another streamer; nothing was recorded.' },
  other_provider: { status: 422, message: 'The reference was prepared for another payment provider; nothing was recorded.' },
  amount_mismatch: { status: 422, message: 'The paid amount differs from the donation the donor prepared; nothing was recorded.' },
  currency_mismatch: { status: 422, message: 'The paid currency differs from the donation the donor prepared; nothing was recorded.' },
  checkout_mismatch: { status: 422, message: 'The checkout differs from the one opened for this donation; nothing was recorded.' },
};

/**
 * Recorded and duplicate answer 200 (a provider retries anything else, and a duplicate is a retry
 * already served). A payment for a reference we never issued is acknowledged and ignored: the
 * same wallet or account may also be paid from elsewhere. A mismatch is refused (422) and logged.
 */
export function outcomeReply(request: FastifyRequest, reply: FastifyReply, provider: ProviderId, paymentId: string, outcome: PaymentOutcome): FastifyReply {
  if (outcome.status === 'recorded') {
    request.log.info({ provider, paymentId, donationId: outcome.donation.id }, 'payment recorded');
    return reply.send({ received: true, donation_id: outcome.donation.id });
  }
  if (outcome.status === 'duplicate') {
    request.log.info({ provider, paymentId, donationId: outcome.donationId }, 'payment notification repeated; already recorded');
    return reply.send({ received: true, duplicate: true });
  }
  const { status, message } = REJECTIONS[outcome.reason];
  logRefusal(request, provider, paymentId, outcome.reason);
  return status === 200 ? reply.send({ received: true, ignored: message }) : reply.status(status).send({ message });
}
