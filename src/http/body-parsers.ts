import type { FastifyInstance, FastifyRequest } from 'fastify';
import formbody from '@fastify/formbody';
import multipart from '@fastify/multipart';
import qs from 'qs';

// Bracket notation (`title[en_US]=…`, `scope[0]=…`) and repeated keys (`scope=a&scope=b`) as in
// INTEROP §1; bounded so a hostile body cannot build huge nested objects.
const QS_OPTIONS: qs.IParseOptions = { depth: 3, arrayLimit: 100, parameterLimit: 1000, allowPrototypes: false };

export function parseForm(body: string): Record<string, unknown> {
  return qs.parse(body, QS_OPTIONS) as Record<string, unknown>;
}

/** JSON when the text looks like JSON, else form encoding: INTEROP §1 "parse the body by content". */
function parseByContent(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed === '') return {};
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    try {
      return JSON.parse(trimmed);
    } catch {
      throw Object.assign(new Error('The request body is not valid JSON.'), { statusCode: 400 });
    }
  }
  return parseForm(trimmed);
}

/** Multipart text fields, nested through the same bracket rules as form bodies; files are ignored. */
function nestMultipartFields(request: FastifyRequest): void {
  const body = request.body as Record<string, unknown> | undefined;
  if (!body || typeof body !== 'object') return;
  const pairs = new URLSearchParams();
  for (const [key, value] of Object.entries(body)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      if (typeof item === 'string') pairs.append(key, item);
    }
  }
  request.body = parseForm(pairs.toString());
}

export async function registerBodyParsers(app: FastifyInstance): Promise<void> {
  await app.register(formbody, { parser: parseForm });
  await app.register(multipart, {
    attachFieldsToBody: 'keyValues',
    limits: { fields: 1000, fieldSize: 64 * 1024, files: 5, fileSize: 1024 * 1024 },
    onFile: async (part) => {
      await part.toBuffer(); // drain and drop: no endpoint takes files
    },
  });
  app.addHook('preValidation', async (request) => {
    if (request.isMultipart()) nestMultipartFields(request);
  });
  app.addContentTypeParser('text/plain', { parseAs: 'string' }, async (_req: FastifyRequest, body: string) => parseByContent(body));
  app.addContentTypeParser('*', { parseAs: 'string' }, async (_req: FastifyRequest, body: string) => parseByContent(body));
}
