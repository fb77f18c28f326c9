import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { userById } from '../modules/accounts/accounts.service.js';
import { escapeHtml } from './html.js';

const STATIC_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'static');
const TYPES: Record<string, string> = { '.css': 'text/css; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.svg': 'image/svg+xml', '.png': 'image/png', '.mp3': 'audio/mpeg', '.wav': 'audio/wav' };

/** Every one of our static files, by name. */
function readStaticFiles(): Map<string, { body: Buffer; type: string }> {
  const files = new Map<string, { body: Buffer; type: string }>();
  for (const name of fs.readdirSync(STATIC_DIR)) {
    const type = TYPES[path.extname(name)];
    if (type) files.set(name, { body: fs.readFileSync(path.join(STATIC_DIR, name)), type });
  }
  return files;
}

/** Our own static files (read once, by the first request for one: a start does not need them), plus generated default avatars. */
export async function staticRoutes(app: FastifyInstance): Promise<void> {
  let read: Map<string, { body: Buffer; type: string }> | null = null;
  const files = () => (read ??= readStaticFiles());
  app.get<{ Params: { file: string } }>('/static/:file', async (request, reply) => {
    const file = files().get(request.params.file);
    if (!file) return reply.callNotFound();
    return reply.header('cache-control', 'public, max-age=3600').type(file.type).send(file.body);
  });

  // Browsers (and OBS's) ask every origin for /favicon.ico whatever the page links; answer with our icon.
  app.get('/favicon.ico', async (_request, reply) => {
    const icon = files().get('favicon.svg')!;
    return reply.header('cache-control', 'public, max-age=86400').type(icon.type).send(icon.body);
  });

  app.get<{ Params: { id: string } }>('/avatars/:id', async (request, reply) => {
    const id = Number.parseInt(request.params.id, 10);
    if (!Number.isSafeInteger(id) || id <= 0) return reply.callNotFound();
    const user = await userById(app.ctx.db, id);
    if (!user) return reply.callNotFound();
    return reply.header('cache-control', 'public, max-age=300').type('image/svg+xml').send(defaultAvatar(id, user.name));
  });
}

/** A coloured disc with the name's initial: the avatar until the streamer sets their own. */
export function defaultAvatar(id: number, name: string): string {
  const hue = (id * 137) % 360;
  const initial = escapeHtml(Array.from(name.trim())[0]?.toUpperCase() ?? '?');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="128" height="128" viewBox="0 0 128 128"><circle cx="64" cy="64" r="64" fill="hsl(${hue},55%,50%)"/><text x="64" y="84" font-family="sans-serif" font-size="60" text-anchor="middle" fill="#fff">${initial}</text></svg>`;
}

export function defaultAvatarUrl(publicUrl: string, userId: number): string {
  return `${publicUrl}/avatars/${userId}.svg`;
}
