import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import qs from 'qs';
import Stripe from 'stripe';

/**
 * A STAND-IN for the Stripe API and its hosted Checkout page, on 127.0.0.1, for tests only: it is
 * not Stripe and checks nothing Stripe would. It answers the one call OpenAlerts makes
 * (POST /v1/checkout/sessions, form-encoded as the `stripe` package sends it) with a session
 * whose `url` is its own minimal "hosted checkout" page; paying there sends the signed
 * `checkout.session.completed` webhook (signed with the package's generateTestHeaderString) to
 * `webhookUrl` and redirects the browser to the session's success_url, as Stripe does.
 */
export class StripeStandIn {
  readonly sessions = new Map<string, Record<string, any>>();
  /** Webhook deliveries: status code the app answered, per event. */
  readonly deliveries: Array<{ type: string; status: number }> = [];
  webhookUrl = '';
  private server!: http.Server;
  base = '';

  constructor(private readonly webhookSecret: string) {}

  async start(): Promise<{ host: string; port: number; protocol: 'http' }> {
    this.server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        this.handle(req, res, body).catch((err) => {
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { message: String(err) } }));
        });
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    this.base = `http://127.0.0.1:${port}`;
    return { host: '127.0.0.1', port, protocol: 'http' };
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse, body: string): Promise<void> {
    const url = new URL(req.url ?? '/', this.base);
    if (req.method === 'POST' && url.pathname === '/v1/checkout/sessions') {
      const params = qs.parse(body) as Record<string, any>;
      const item = params.line_items[0];
      const id = `cs_test_${randomBytes(12).toString('hex')}`;
      const session = {
        id, object: 'checkout.session', mode: params.mode, status: 'open', payment_status: 'unpaid',
        amount_total: Number(item.price_data.unit_amount) * Number(item.quantity), currency: item.price_data.currency,
        client_reference_id: params.client_reference_id ?? null, metadata: params.metadata ?? {},
        success_url: params.success_url, cancel_url: params.cancel_url, url: `${this.base}/pay/${id}`, product: item.price_data.product_data.name,
      };
      this.sessions.set(id, session);
      res.writeHead(200, { 'content-type': 'application/json', 'request-id': `req_${id}` });
      res.end(JSON.stringify(session));
      return;
    }
    const pay = /^\/pay\/(cs_test_\w+)$/.exec(url.pathname);
    const session = pay ? this.sessions.get(pay[1]!) : undefined;
    if (pay && session && req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><title>Stripe stand-in checkout</title><h1>Stripe stand-in checkout (test mode)</h1>
<p id="summary">${session.product}: ${(session.amount_total / 100).toFixed(2)} ${String(session.currency).toUpperCase()}</p>
<form method="post"><button id="pay" type="submit">Pay</button></form>`);
      return;
    }
    if (pay && session && req.method === 'POST') {
      Object.assign(session, { status: 'complete', payment_status: 'paid' });
      const payload = JSON.stringify({ id: `evt_${randomBytes(8).toString('hex')}`, object: 'event', type: 'checkout.session.completed', created: Math.floor(Date.now() / 1000), data: { object: session } });
      const answer = await fetch(this.webhookUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret: this.webhookSecret }) },
        body: payload,
      });
      this.deliveries.push({ type: 'checkout.session.completed', status: answer.status });
      res.writeHead(303, { location: session.success_url });
      res.end();
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: `stand-in: no ${req.method} ${url.pathname}` } }));
  }
}
