import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * What `new Worker(...)` takes for a worker thread's module: in the build, its own entry chunk
 * (`built`, listed in scripts/build.js's entryPoints); run as TypeScript (tests, benches, `tsx`),
 * the `.ts` file (`source`) loaded through tsx, which a worker thread does not inherit from its
 * parent's `--import`. `importMetaUrl` is the caller's: in the build it is the URL its file has
 * under dist/ (scripts/build.js rewrites it), so both are resolved from it. Under `npm test`
 * (scripts/test.js) the code runs compiled while import.meta.url names the .ts source: the worker
 * then starts from the compiled tree (OPENALERTS_TEST_COMPILED), where `source` is an entry of
 * its own at the same relative place, instead of loading src/ through tsx again.
 */
export function workerEntry(importMetaUrl: string, source: string, built: string): [string | URL, { eval?: boolean }] {
  if (!importMetaUrl.endsWith('.ts')) return [new URL(built, importMetaUrl), {}];
  const entry = new URL(source, importMetaUrl);
  const compiled = process.env.OPENALERTS_TEST_COMPILED;
  if (compiled) {
    const fromSrc = path.relative(fileURLToPath(new URL('.', import.meta.url)), fileURLToPath(entry)).replace(/\.ts$/, '.js');
    return [pathToFileURL(path.join(compiled, 'src', fromSrc)), {}];
  }
  // tsx is a development dependency; the build never gets here. Its ESM API (the package's `require`
  // condition would give the CommonJS one).
  const tsx = pathToFileURL(path.join(path.dirname(createRequire(importMetaUrl).resolve('tsx/package.json')), 'dist/esm/api/index.mjs')).href;
  return [`import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry.href)}); })`, { eval: true }];
}
