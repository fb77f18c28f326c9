import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';

const require = createRequire(import.meta.url);

/**
 * Third-party browser bundles served from node_modules at /static/vendor/<name> (same origin, so a
 * `script-src 'self'` policy allows them). Found at start (a missing package stops the start), read
 * once by the first request for one of them (over half a megabyte, which no start needs); the
 * version is whatever package-lock.json pins.
 */
const VENDOR_FILES: Record<string, { module: string; file: string; type: string }> = {
  'centrifuge.js': { module: 'centrifuge', file: 'dist/centrifuge.js', type: 'text/javascript; charset=utf-8' },
  'centrifuge.js.map': { module: 'centrifuge', file: 'dist/centrifuge.js.map', type: 'application/json' },
  // ICU messages in the browser (widgets, dashboard): the package's one-file ES module build, with
  // its dependencies inside (despite the name, it ends in `export {…}`); /static/i18n.js imports it.
  'intl-messageformat.js': { module: 'intl-messageformat', file: 'intl-messageformat.iife.js', type: 'text/javascript; charset=utf-8' },
};

/** Drops a source-map comment that points at a file the package does not ship. */
function withoutMissingSourceMap(dir: string, body: Buffer): Buffer {
  const text = body.toString('utf8');
  const m = /\n\/\/# sourceMappingURL=(\S+)\s*$/.exec(text);
  return m && !fs.existsSync(path.join(dir, m[1]!)) ? Buffer.from(text.slice(0, m.index + 1)) : body;
}

/** The package's folder, found the way Node looks up modules (its `exports` hide package.json). */
function packageDir(name: string): string {
  for (const dir of require.resolve.paths(name) ?? []) {
    if (fs.existsSync(path.join(dir, name, 'package.json'))) return path.join(dir, name);
  }
  throw new Error(`${name} is not installed`);
}

export async function vendorRoutes(app: FastifyInstance): Promise<void> {
  const paths = Object.entries(VENDOR_FILES).map(([name, spec]) => ({ name, file: path.join(packageDir(spec.module), spec.file), type: spec.type }));
  let files: Map<string, { body: Buffer; type: string }> | null = null;
  const read = () => new Map(paths.map(({ name, file, type }) => [name, { body: withoutMissingSourceMap(path.dirname(file), fs.readFileSync(file)), type }]));
  // Another page set may have registered the same vendor route first; one is enough.
  if (app.hasRoute({ method: 'GET', url: '/static/vendor/:file' })) return;
  app.get<{ Params: { file: string } }>('/static/vendor/:file', async (request, reply) => {
    const file = (files ??= read()).get(request.params.file);
    if (!file) return reply.callNotFound();
    return reply.header('cache-control', 'public, max-age=3600').type(file.type).send(file.body);
  });
}
