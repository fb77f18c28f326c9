#!/usr/bin/env node
// Builds dist/, what production runs, and what the commands the tests start run (the tests
// themselves run src/ through tsx):
//
// - dist/chunks/: the service as a few ES modules that esbuild bundles from src/cli.ts with the
//   packages it uses, split where src/ imports lazily (`await import(…)`), so a command or a
//   server loads what it needs and not more. Loading the packages file by file (fastify and its
//   plugins, ajv, qs and their dependencies: well over a thousand CommonJS and ES modules) was most
//   of `serve`'s start-up CPU; one bundle is read and compiled in one go.
// - dist/cli.js: what bin/openalerts.js imports; it loads dist/chunks/cli.js.
// - every file under src/ that is not TypeScript copied at the same relative path (static assets),
//   and each `import.meta.url` in src/ rewritten to the URL its file would have at that place, so a
//   module finds what lies beside it in dist/ as it does in src/ (src/web/static.ts → dist/web/static/).
// - dist/cjs/: CommonJS packages that a process needs only on first use (Ajv and
//   fast-json-stringify: the first route that validates or serializes by schema; qs: the first
//   form; light-my-request: Fastify's inject, which a server never calls), bundled apart from the
//   chunks, so a start neither runs nor even parses their ~0.9 MB. src/ takes them with `require('…')`
//   inside the function that first needs them (under tsx, where ES modules have no `require`, the
//   same code falls back to createRequire and node_modules), Fastify's own code requires them
//   inside functions too, and the chunks' require resolves such a name to its file in dist/cjs/.
// - dist/THIRD-PARTY-NOTICES.txt: the licence of every package bundled (MIT and alike ask for the
//   notice to travel with copies of the code).
//
// Not bundled, loaded from node_modules as installed: packages that read their own files at run
// time or are native (better-sqlite3, pino and its worker-thread transports, Swagger UI's assets,
// the centrifuge client we serve, esbuild), the PostgreSQL and Redis drivers, which only a
// PostgreSQL or Redis deployment loads, and packages that `import()` a CommonJS package and use
// its named exports (@fastify/cookie → cookie): a bundle can only give such an import the module
// as `default`, where Node finds the names (the build refuses a bundle with such an import). A
// package the code `require`s through createRequire (the moderation's confusables, linkify-it and
// tlds, loaded synchronously on first use) is not bundled either.
//
// esbuild transpiles without type checking (`npm run typecheck` does that; `isolatedModules` in
// tsconfig.json keeps every file transpilable on its own), in a few seconds, which is why `npm ci`,
// `npm start` and `npm pack` can all build. It is a runtime dependency so that
// `npm ci --omit=dev` in a checkout can still build.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const src = path.join(root, 'src');
const dist = path.join(root, 'dist');
const EXTERNAL = ['better-sqlite3', 'pino', 'pino-pretty', '@fastify/swagger-ui', 'centrifuge', 'esbuild', 'pg', 'ioredis', '@fastify/cookie'];
/** External CommonJS packages a start loads (a static import of one is made a require). */
const REQUIRED = ['better-sqlite3', '@fastify/cookie'];
const packageOf = (specifier) => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');
/** dist/cjs/<bundle>.bundle.cjs: the packages each holds (one bundle shares what its packages share, e.g. Ajv). */
const ON_FIRST_USE = { 'schema-compilers': ['@fastify/ajv-compiler', '@fastify/fast-json-stringify-compiler'], qs: ['qs'], 'light-my-request': ['light-my-request'] };
const stubOf = (name) => `${name.replace(/^@/, '').replace(/\//g, '+')}.cjs`;

const assets = [];
for (const entry of fs.readdirSync(src, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile()) continue;
  const file = path.join(entry.parentPath ?? entry.path, entry.name);
  if (!file.endsWith('.ts')) assets.push(file);
}

/** Packages in EXTERNAL stay imports, those of ON_FIRST_USE requires of their dist/cjs/ file; every other package is bundled. */
const onFirstUse = new Set(Object.values(ON_FIRST_USE).flat());
const externals = {
  name: 'externals',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      if (onFirstUse.has(args.path)) {
        if (args.kind !== 'require-call') throw new Error(`${args.path} is bundled into dist/cjs/ and must be taken with require() where it is first needed (imported by ${path.relative(root, args.importer)})`);
        return { path: `../cjs/${stubOf(args.path)}`, external: true };
      }
      if (!EXTERNAL.includes(packageOf(args.path))) return undefined;
      // A static import of an external CommonJS package becomes a require: Node would otherwise
      // resolve it as an ES module import and scan its source (and what it re-exports) for names.
      if (args.kind === 'import-statement' && REQUIRED.includes(args.path)) return { path: args.path, namespace: 'required' };
      return { path: args.path, external: true };
    });
    build.onLoad({ filter: /.*/, namespace: 'required' }, (args) => ({ contents: `module.exports = require(${JSON.stringify(args.path)});`, loader: 'js' }));
  },
};

/**
 * `import.meta.url` of src/a/b.ts becomes the URL of dist/a/b.js, computed from the chunk the code
 * lands in (every chunk is in dist/chunks/). Other `import.meta` properties would not survive
 * bundling the same way, so the build refuses them.
 */
const fileUrls = {
  name: 'file-urls',
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, async (args) => {
      if (!args.path.startsWith(src + path.sep)) return undefined;
      const text = await fs.promises.readFile(args.path, 'utf8');
      const other = /\bimport\.meta\.(?!url\b)\w+/.exec(text);
      if (other) throw new Error(`${path.relative(root, args.path)}: ${other[0]} is not supported by the build; use import.meta.url`);
      const asBuilt = path.relative(src, args.path).replace(/\.ts$/, '.js').split(path.sep).join('/');
      return { contents: text.replace(/\bimport\.meta\.url\b/g, `new URL(${JSON.stringify(`../${asBuilt}`)}, import.meta.url).href`), loader: 'ts' };
    });
  },
};

/** One notice per bundled package: name, version, licence and its licence file. */
function thirdPartyNotices(metafile) {
  const dirs = new Set();
  for (const input of Object.keys(metafile.inputs)) {
    const match = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (match) dirs.add(match[1]);
  }
  const notices = [...dirs].sort().map((dir) => {
    const abs = path.join(root, dir);
    const pkg = JSON.parse(fs.readFileSync(path.join(abs, 'package.json'), 'utf8'));
    const licenseFile = fs.readdirSync(abs).find((f) => /^(licen[cs]e|copying)(\.|$)/i.test(f));
    const text = licenseFile ? fs.readFileSync(path.join(abs, licenseFile), 'utf8').trim() : `Licence: ${pkg.license ?? 'see the package'}${pkg.author ? `; author: ${typeof pkg.author === 'string' ? pkg.author : pkg.author.name}` : ''}`;
    return `${pkg.name}@${pkg.version} (${pkg.license ?? 'unknown licence'})\n\n${text}\n`;
  });
  return `Packages bundled into dist/chunks/ by scripts/build.js, with their licences.\n\n${notices.join('\n' + '-'.repeat(72) + '\n\n')}`;
}

// Build next to dist/ and swap at the end, so an interrupted or failed build never leaves a
// half-written dist/ behind (the previous one stays until the new one is complete).
const staging = fs.mkdtempSync(path.join(root, '.dist-'));
fs.chmodSync(staging, 0o755); // mkdtemp makes it private; the service may run as another user
try {
  const result = await esbuild.build({
    // The worker threads' modules are entries of their own (dist/chunks/<name>.worker.js; src/worker-entry.ts).
    entryPoints: [path.join(src, 'cli.ts'), path.join(src, 'modules/webhooks/dispatcher.worker.ts'), path.join(src, 'db/wal-checkpointer.worker.ts')],
    outdir: staging,
    entryNames: 'chunks/[name]',
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20.19',
    // CommonJS packages inside an ES module bundle: their own `require` of a built-in or of a name
    // computed at run time goes through a real require, resolved from dist/chunks/.
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
    plugins: [externals, fileUrls],
    // Linked maps with the sources inside: `node --enable-source-maps` shows TypeScript lines,
    // and an installed package (which ships no src/) can still do that.
    sourcemap: 'linked',
    sourcesContent: true,
    legalComments: 'none', // the notices file carries them
    metafile: true,
    logLevel: 'warning',
  });
  // A CommonJS package that is the target of import() becomes a chunk whose only export is its
  // module.exports as `default` (esbuild cannot know its names; Node finds them at run time).
  const cjsImported = Object.values(result.metafile.outputs).filter((out) => out.entryPoint?.includes('node_modules/') && out.exports.length === 1 && out.exports[0] === 'default');
  if (cjsImported.length > 0) {
    const packages = cjsImported.map((out) => out.entryPoint.replace(/^.*node_modules\//, '')).join(', ');
    throw new Error(`a CommonJS package is loaded with import(), which a bundle cannot give its named exports (${packages}): add the package that imports it to EXTERNAL in scripts/build.js`);
  }
  fs.writeFileSync(path.join(staging, 'cli.js'), "// The service's entry; the code is in chunks/ (scripts/build.js).\nimport './chunks/cli.js';\n");
  // Each bundle exports its packages by name; a one-line file per package hands out its own. They
  // resolve from Fastify's folder, which finds its own dependencies (light-my-request) and ours.
  const fastifyDir = path.dirname(createRequire(path.join(root, 'package.json')).resolve('fastify/package.json'));
  const inputs = { ...result.metafile.inputs };
  for (const [name, packages] of Object.entries(ON_FIRST_USE)) {
    const bundle = await esbuild.build({
      stdin: { contents: `module.exports = { ${packages.map((p) => `${JSON.stringify(p)}: require(${JSON.stringify(p)})`).join(', ')} };`, resolveDir: fastifyDir, loader: 'js', sourcefile: `dist/cjs/${name}.bundle.cjs` },
      outfile: path.join(staging, 'cjs', `${name}.bundle.cjs`),
      bundle: true,
      format: 'cjs',
      platform: 'node',
      target: 'node20.19',
      external: EXTERNAL,
      legalComments: 'none',
      metafile: true,
      logLevel: 'warning',
    });
    Object.assign(inputs, bundle.metafile.inputs);
    for (const p of packages) fs.writeFileSync(path.join(staging, 'cjs', stubOf(p)), `module.exports = require('./${name}.bundle.cjs')[${JSON.stringify(p)}];\n`);
  }
  fs.writeFileSync(path.join(staging, 'THIRD-PARTY-NOTICES.txt'), thirdPartyNotices({ inputs }));
  for (const file of assets) {
    const to = path.join(staging, path.relative(src, file));
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.copyFileSync(file, to);
  }
  const old = `${staging}-old`;
  if (fs.existsSync(dist)) fs.renameSync(dist, old);
  fs.renameSync(staging, dist);
  fs.rmSync(old, { recursive: true, force: true });
} catch (err) {
  fs.rmSync(staging, { recursive: true, force: true });
  throw err;
}
