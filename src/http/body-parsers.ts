import { createRequire } from 'node:module';
import querystring from 'node:querystring';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import formbody from '@fastify/formbody';
import multipart from '@fastify/multipart';
import type qs from 'qs';
import secureJson from 'secure-json-parse';
import { DomainError, msg, ValidationError, type Message } from '../domain/errors.js';

/**
 * What any parser takes from a request, whatever the encoding (form, multipart, JSON, query
 * string). No endpoint needs more: the deepest real input is `title[en_US]` (two levels), the
 * longest a few dozen fields. Beyond these the request is refused with a 400, never truncated or
 * half-read, so a hostile body cannot build huge or deep structures for the code after it.
 */
export const INPUT_LIMITS = {
  /** Levels of nested objects/arrays, the top one included: `a[b][c][d]=1` is four. */
  levels: 4,
  /** Values in one request: form and query pairs, multipart fields, JSON array items and members. */
  parameters: 1000,
  /** Items of one array (`scope[]=…` repeated, `scope[7]=…`). */
  arrayItems: 100,
} as const;

/**
 * A request the parsers refuse. A validation error (compatibility.md §1: 400 `{message, errors}`) that also
 * carries `statusCode`, so surfaces with their own error shape (OAuth) see a 400 too.
 */
export class UnparsableInput extends ValidationError {
  readonly statusCode = 400;
  constructor(where: 'body' | 'query', message: Message) {
    super({ [where]: [message] });
  }
}

const tooMany = (where: 'body' | 'query') =>
  new UnparsableInput(where, msg('err.body.too_many_parameters', { max: INPUT_LIMITS.parameters }));
const tooDeep = (where: 'body' | 'query') =>
  new UnparsableInput(where, msg('err.body.too_deep', { max: INPUT_LIMITS.levels }));

// Bracket notation (`title[en_US]=…`, `scope[0]=…`) and repeated keys (`scope=a&scope=b`) as in
// compatibility.md §1. strictDepth and throwOnLimitExceeded make qs refuse (RangeError) what it would
// otherwise quietly reshape: deeper keys kept as literal text, extra pairs dropped, long arrays
// turned into objects.
const QS_OPTIONS: qs.IParseOptions = {
  depth: INPUT_LIMITS.levels - 1,
  strictDepth: true,
  arrayLimit: INPUT_LIMITS.arrayItems,
  parameterLimit: INPUT_LIMITS.parameters,
  throwOnLimitExceeded: true,
  allowPrototypes: false,
};

// qs (with side-channel, get-intrinsic and object-inspect, which do their set-up as they load) is
// required by the first form or bracketed query string, not by every start. A bundled CommonJS
// package runs on its `require` (scripts/build.js); src/ under tsx has no `require` in ES modules.
let qsModule: typeof qs | undefined;
const loadQs = (): typeof qs => (qsModule ??= typeof require === 'function' ? require('qs') : createRequire(import.meta.url)('qs'));

export function parseForm(body: string, where: 'body' | 'query' = 'body'): Record<string, unknown> {
  try {
    return loadQs().parse(body, QS_OPTIONS) as Record<string, unknown>;
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    throw /depth/i.test(err.message) ? tooDeep(where) : err.message.includes('Array limit')
      ? new UnparsableInput(where, msg('err.body.too_many_items', { max: INPUT_LIMITS.arrayItems }))
      : tooMany(where);
  }
}

/**
 * Checks a JSON text against INPUT_LIMITS before it is parsed: one pass over the characters,
 * counting container depth and separators outside strings. JSON.parse itself has no such limits,
 * and a megabyte of `[` is enough to exhaust the stack of whatever walks the result.
 */
function jsonShapeProblem(text: string): UnparsableInput | null {
  let depth = 0;
  let values = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > INPUT_LIMITS.levels) return tooDeep('body');
    } else if (c === 0x7d || c === 0x5d) depth--;
    else if (c === 0x2c && ++values >= INPUT_LIMITS.parameters) return tooMany('body');
  }
  return null;
}

/**
 * JSON within INPUT_LIMITS, refusing `__proto__` and `constructor.prototype` keys (the
 * prototype-poisoning guard Fastify's own JSON parser applies).
 */
export function parseJson(text: string): unknown {
  const problem = jsonShapeProblem(text);
  if (problem) throw problem;
  try {
    return secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
    throw new UnparsableInput('body', /prototype property/.test(err.message) ? msg('err.body.prototype') : msg('err.body.json'));
  }
}

/** JSON when the text looks like JSON, else form encoding: compatibility.md §1 "parse the body by content". */
function parseByContent(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed === '') return {};
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) return parseJson(trimmed);
  return parseForm(trimmed);
}

/** The request's query string, or a note of why it was refused (see `refuseBadQuery`). */
const QUERY_REFUSED = Symbol('query refused');

/**
 * The router's query-string parser (flat `key=value` pairs, repeated keys as arrays, as Fastify's
 * default). The router cannot answer an error from here, so an over-long query string comes back
 * as a marked empty query that the onRequest hook below refuses.
 */
export function parseQueryString(text: string): Record<string, unknown> {
  if (text.length === 0) return {};
  let pairs = 1;
  for (let i = text.indexOf('&'); i !== -1; i = text.indexOf('&', i + 1)) {
    if (++pairs > INPUT_LIMITS.parameters) return Object.assign(Object.create(null), { [QUERY_REFUSED]: true });
  }
  return querystring.parse(text, '&', '=', { maxKeys: 0 });
}

const MULTIPART_LIMIT_CODES: Record<string, Message> = {
  FST_FIELDS_LIMIT: msg('err.body.too_many_parameters', { max: INPUT_LIMITS.parameters }),
  FST_PARTS_LIMIT: msg('err.body.too_many_parts', { max: INPUT_LIMITS.parameters }),
  FST_FILES_LIMIT: msg('err.body.too_many_files'),
};

/**
 * Multipart text fields, nested through the same bracket rules and limits as form bodies; files
 * are read and dropped, except in the fields a route names in `config.uploads` (alert media). Busboy reports a body it cannot read — no
 * boundary, a truncated or malformed part — as a plain Error; that is the client's malformed
 * input, so it becomes a 400 naming the problem. Limits keep their own codes (a file over the size
 * limit stays a 413).
 */
async function readMultipartFields(request: FastifyRequest): Promise<void> {
  const pairs = new URLSearchParams();
  const uploads = request.routeOptions.config.uploads;
  const files: Record<string, Buffer> = {};
  try {
    // A route that takes files reads them up to its own limit (plus one byte, to see it exceeded).
    const parts = uploads ? request.parts({ limits: { fileSize: uploads.maxBytes + 1, files: uploads.fields.length } }) : request.parts();
    for await (const part of parts) {
      if (part.type === 'file') {
        if (uploads?.fields.includes(part.fieldname)) {
          const data = await readUpTo(part.file, uploads.maxBytes, part.fieldname);
          // An empty file input still sends a part (no name, no bytes): nothing chosen.
          if (data.length > 0 || part.filename) files[part.fieldname] = data;
        } else await part.toBuffer();
      } else if (typeof part.value === 'string') pairs.append(part.fieldname, part.value);
    }
  } catch (err) {
    if (err instanceof UploadTooLarge) throw err;
    const { code, statusCode } = err as { code?: string; statusCode?: number };
    if (code && MULTIPART_LIMIT_CODES[code]) throw new UnparsableInput('body', MULTIPART_LIMIT_CODES[code]);
    if (statusCode) throw err;
    throw new UnparsableInput('body', msg('err.body.multipart', { reason: (err as Error).message }));
  }
  request.body = parseForm(pairs.toString());
  if (uploads) request.uploadedFiles = files;
}

/** 413: a file larger than its route's limit, refused as soon as the limit is passed (the rest is never read). */
export class UploadTooLarge extends DomainError {
  readonly status = 413;
  constructor(readonly field: string, readonly maxBytes: number) {
    super(msg('err.upload.too_large', { field, bytes: maxBytes, mb: (maxBytes / 1024 / 1024).toFixed(1) }));
  }
}

/** A file part into memory, at most `maxBytes`: past that the stream is destroyed and nothing kept. */
async function readUpTo(file: NodeJS.ReadableStream & { destroy(): void }, maxBytes: number, field: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of file as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      chunks.length = 0;
      file.destroy();
      throw new UploadTooLarge(field, maxBytes);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** This route takes files in these multipart fields, each at most `maxBytes`; they land in `request.uploadedFiles`. */
    uploads?: { fields: readonly string[]; maxBytes: number };
  }
  interface FastifyRequest {
    /** Files of a route with `config.uploads`, by field (only the fields a file was chosen for). */
    uploadedFiles?: Record<string, Buffer>;
  }
}

/**
 * Every parser of request input, registered at the root (body parsing applies to every route):
 * form (qs), multipart, JSON (also `text/plain` and unknown types, by content), and the refusal of
 * a query string the router's parser marked (`parseQueryString`, given to Fastify in app.ts).
 */
export async function registerBodyParsers(app: FastifyInstance): Promise<void> {
  await app.register(formbody, { parser: (body) => parseForm(body) });
  await app.register(multipart, {
    limits: { fields: INPUT_LIMITS.parameters, parts: INPUT_LIMITS.parameters, fieldSize: 64 * 1024, files: 5, fileSize: 1024 * 1024 },
  });
  app.addHook('onRequest', async (request) => {
    if ((request.query as Record<symbol, unknown>)[QUERY_REFUSED]) throw tooMany('query');
  });
  app.addHook('preValidation', async (request) => {
    if (request.isMultipart()) await readMultipartFields(request);
  });
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, async (_req: FastifyRequest, body: string) => {
    if (body.trim() === '') throw new UnparsableInput('body', msg('err.body.empty'));
    return parseJson(body);
  });
  app.addContentTypeParser('text/plain', { parseAs: 'string' }, async (_req: FastifyRequest, body: string) => parseByContent(body));
  app.addContentTypeParser('*', { parseAs: 'string' }, async (_req: FastifyRequest, body: string) => parseByContent(body));
}
