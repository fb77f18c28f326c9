import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';

/**
 * A browser-like client over `app.inject`: keeps cookies, follows nothing by itself, and fills in
 * CSRF tokens from the last form it saw — so page tests post exactly what a browser would.
 */
export class BrowserSession {
  readonly cookies = new Map<string, string>();
  lastCsrf: string | null = null;

  constructor(private readonly app: FastifyInstance) {}

  async request(options: InjectOptions): Promise<LightMyRequestResponse> {
    const cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const response = await this.app.inject({ ...options, headers: { ...(options.headers ?? {}), ...(cookie ? { cookie } : {}) } });
    for (const c of response.cookies as { name: string; value: string; maxAge?: number; expires?: Date }[]) {
      if (c.value === '' || (c.expires && c.expires.getTime() < Date.now()) || c.maxAge === 0) this.cookies.delete(c.name);
      else this.cookies.set(c.name, c.value);
    }
    const csrf = /name="_csrf" value="([^"]+)"/.exec(response.body);
    if (csrf) this.lastCsrf = csrf[1]!;
    return response;
  }

  get(url: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
    return this.request({ method: 'GET', url, headers: { accept: 'text/html', ...headers } });
  }

  /** Posts a form the way a browser does, with the CSRF token of the last page unless given. */
  postForm(url: string, fields: Record<string, string>, withCsrf = true): Promise<LightMyRequestResponse> {
    const body = new URLSearchParams(fields);
    if (withCsrf && !('_csrf' in fields) && this.lastCsrf) body.set('_csrf', this.lastCsrf);
    return this.request({ method: 'POST', url, payload: body.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' } });
  }

  /** What a browser does with a redirect: GET its Location (the answer itself when it is none). */
  async follow(response: LightMyRequestResponse): Promise<LightMyRequestResponse> {
    const location = response.headers.location;
    if (response.statusCode < 300 || response.statusCode >= 400 || typeof location !== 'string') return response;
    return this.get(location);
  }

  /** Posts a multipart form (fields, then files, as a browser orders a form's inputs), with the CSRF token of the last page. */
  async postMultipart(url: string, fields: Record<string, string>, files: Record<string, { name: string; data: Buffer; type?: string }> = {}): Promise<LightMyRequestResponse> {
    const form = new FormData();
    if (!('_csrf' in fields) && this.lastCsrf) form.append('_csrf', this.lastCsrf);
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    for (const [k, f] of Object.entries(files)) form.append(k, new Blob([new Uint8Array(f.data)], { type: f.type ?? 'application/octet-stream' }), f.name);
    const encoded = new Request('http://localhost/', { method: 'POST', body: form });
    const payload = Buffer.from(await encoded.arrayBuffer());
    return this.request({ method: 'POST', url, payload, headers: { 'content-type': encoded.headers.get('content-type')!, accept: 'text/html' } });
  }
}
