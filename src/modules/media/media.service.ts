import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { msg, ValidationError, type Message } from '../../domain/errors.js';
import { isComplete, type Container } from './containers.js';
import * as repo from './media.repository.js';

/**
 * Alert media a streamer uploads: an image (PNG, JPEG, GIF, WebP), a WebM video, or a sound (MP3,
 * Ogg, WAV). What a file is comes from its content (`file-type` reads the magic bytes; the name
 * and the browser's claimed type are ignored), and it must be whole (`containers.ts`). SVG is
 * refused: it is a document that can carry script, and nothing here needs vector images.
 * Files are kept in the database (alert_media), so every node of a deployment serves them.
 */

export type MediaKind = 'image' | 'sound';

/** Content types we accept, by what `file-type` reports, with the container to check and the extension we serve. */
const ACCEPTED: Record<MediaKind, Record<string, { container: Container; ext: string; contentType: string }>> = {
  image: {
    'image/png': { container: 'png', ext: 'png', contentType: 'image/png' },
    'image/gif': { container: 'gif', ext: 'gif', contentType: 'image/gif' },
    'image/jpeg': { container: 'jpeg', ext: 'jpg', contentType: 'image/jpeg' },
    'image/webp': { container: 'riff', ext: 'webp', contentType: 'image/webp' },
    'video/webm': { container: 'ebml', ext: 'webm', contentType: 'video/webm' },
  },
  sound: {
    'audio/mpeg': { container: 'mp3', ext: 'mp3', contentType: 'audio/mpeg' },
    'audio/ogg': { container: 'ogg', ext: 'ogg', contentType: 'audio/ogg' },
    'audio/ogg; codecs=opus': { container: 'ogg', ext: 'ogg', contentType: 'audio/ogg' },
    'audio/opus': { container: 'ogg', ext: 'ogg', contentType: 'audio/ogg' },
    'audio/wav': { container: 'riff', ext: 'wav', contentType: 'audio/wav' },
    'audio/x-wav': { container: 'riff', ext: 'wav', contentType: 'audio/wav' },
    'audio/vnd.wave': { container: 'riff', ext: 'wav', contentType: 'audio/wav' },
  },
};

const EXTENSIONS: Record<string, string> = { 'image/png': 'png', 'image/gif': 'gif', 'image/jpeg': 'jpg', 'image/webp': 'webp', 'video/webm': 'webm', 'audio/mpeg': 'mp3', 'audio/ogg': 'ogg', 'audio/wav': 'wav' };

const LISTS: Record<MediaKind, string> = { image: 'PNG, JPEG, GIF, WebP or WebM', sound: 'MP3, Ogg or WAV' };

/** The public path of a stored file: its content hash, so it can be cached forever. */
export function mediaPath(sha256: string, contentType: string): string {
  return `/media/${sha256}.${EXTENSIONS[contentType] ?? 'bin'}`;
}

export function isVideo(contentType: string): boolean {
  return contentType.startsWith('video/');
}

function looksLikeSvg(data: Buffer): boolean {
  const head = data.subarray(0, 4096).toString('utf8').toLowerCase();
  return head.includes('<svg') || (head.trimStart().startsWith('<?xml') && head.includes('svg'));
}

/**
 * What the upload is, or a ValidationError on `field` telling the streamer what to upload
 * instead. `maxBytes` is checked by the reader too (it stops reading past it); this repeats it
 * for callers that hold a buffer.
 */
export async function checkMedia(kind: MediaKind, field: string, data: Buffer, maxBytes: number): Promise<{ contentType: string }> {
  const refuse = (message: Message) => ValidationError.field(field, message);
  if (data.length === 0) throw refuse(msg('err.media.empty', { kind, list: LISTS[kind] }));
  if (data.length > maxBytes) throw refuse(msg('err.media.too_large', { kind, size: formatBytes(maxBytes) }));
  // Loaded on the first upload: a server that never receives one never loads it.
  const { fileTypeFromBuffer } = await import('file-type');
  const type = await fileTypeFromBuffer(data);
  const accepted = type && ACCEPTED[kind][type.mime];
  if (!accepted) {
    if (kind === 'image' && looksLikeSvg(data)) throw refuse(msg('err.media.svg'));
    throw refuse(type ? msg('err.media.wrong_type_found', { kind, list: LISTS[kind], mime: type.mime }) : msg('err.media.wrong_type', { kind, list: LISTS[kind] }));
  }
  if (!isComplete(accepted.container, data)) throw refuse(msg('err.media.incomplete', { kind, ext: accepted.ext.toUpperCase() }));
  return { contentType: accepted.contentType };
}

export function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${+(bytes / 1024 / 1024).toFixed(1)} MB` : `${Math.ceil(bytes / 1024)} KB`;
}

/** Stores a checked file for the streamer (once per content) and returns its id. Call inside the write's transaction. */
export async function storeMedia(db: Kysely<DB>, userId: number, data: Buffer, contentType: string): Promise<number> {
  const sha256 = createHash('sha256').update(data).digest('hex');
  return repo.insertMediaIfAbsent(db, { user_id: userId, sha256, content_type: contentType, byte_size: data.length, data, created_at: Date.now() });
}

export const deleteUnusedMedia = repo.deleteUnusedMedia;
export const mediaInfo = repo.mediaInfo;
