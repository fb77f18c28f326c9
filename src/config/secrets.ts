import { hkdfSync, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from './config.js';

export interface Secrets {
  /** AES-256-GCM key for secrets stored reversibly (application client secrets). */
  encryptionKey: Buffer;
  /** HS256 secret for real-time JWTs; a Centrifugo given the same secret accepts our tokens (compatibility.md §5). */
  realtimeTokenSecret: string;
  /** Signs cookies (sessions, CSRF). */
  cookieSecret: string;
}

const SECRET_FILE = 'secret.key';

/**
 * One master key, from SECRET_KEY or generated once into DATA_DIR/secret.key (mode 0600), so the
 * zero-set-up default keeps its sessions and client secrets across restarts. Every node of a
 * multi-node deployment must be given the same SECRET_KEY. Sub-keys are derived with HKDF so one
 * leaked purpose does not expose the others.
 */
export function loadSecrets(config: Pick<Config, 'dataDir' | 'secretKey' | 'realtimeTokenSecret'>): Secrets {
  const master = config.secretKey ?? readOrCreateMasterKey(config.dataDir);
  const derive = (purpose: string) => Buffer.from(hkdfSync('sha256', master, 'openalerts', purpose, 32));
  return {
    encryptionKey: derive('client-secret-encryption'),
    realtimeTokenSecret: config.realtimeTokenSecret ?? derive('realtime-jwt').toString('hex'),
    cookieSecret: derive('cookies').toString('hex'),
  };
}

function readOrCreateMasterKey(dataDir: string): string {
  const file = path.join(dataDir, SECRET_FILE);
  fs.mkdirSync(dataDir, { recursive: true });
  if (!fs.existsSync(file)) {
    // Written aside, then linked into place: link fails if the file exists, so a CLI command and a
    // server starting together agree on one key, and nobody ever reads a half-written file.
    const temp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(temp, randomBytes(32).toString('hex') + '\n', { mode: 0o600 });
    try {
      fs.linkSync(temp, file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      fs.rmSync(temp, { force: true });
    }
  }
  const key = fs.readFileSync(file, 'utf8').trim();
  if (key.length < 32) throw new Error(`${file} is damaged (too short); restore it from a backup or set SECRET_KEY.`);
  return key;
}

export function secretsFileExisted(dataDir: string): boolean {
  return fs.existsSync(path.join(dataDir, SECRET_FILE));
}
