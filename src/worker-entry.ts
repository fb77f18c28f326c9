import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * What `new Worker(...)` takes for a worker thread's module: in the build, its own entry chunk
 * (`built`, listed in scripts/build.js's entryPoints); run as TypeScript (tests, benches, `tsx`),
 * the `.ts` file (`source`) loaded through tsx, which a worker thread does not inherit from its
 * parent's `--import`. `importMetaUrl` is the caller's: in the build it is the URL its file has
 * under dist/ (scripts/build.js rewrites it), so both are resolved from it.
 */
export function workerEntry(importMetaUrl: string, source: string, built: string): [string | URL, { eval?: boolean }] {
  if (!importMetaUrl.endsWith('.ts')) return [new URL(built, importMetaUrl), {}];
  const entry = new URL(source, importMetaUrl);
  // tsx is a development dependency; the build never gets here. Its ESM API (the package's `require`
  // condition would give the CommonJS one).
  const tsx = pathToFileURL(path.join(path.dirname(createRequire(importMetaUrl).resolve('tsx/package.json')), 'dist/esm/api/index.mjs')).href;
  return [`import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry.href)}); })`, { eval: true }];
}
