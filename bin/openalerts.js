#!/usr/bin/env node
// Runs the JavaScript build in dist/ (no TypeScript compiler at run time). `npm ci` and `npm pack`
// build it through the `prepare` script, `npm start` rebuilds it first; after changing src/ in a
// checkout, `npm run build` refreshes it for direct `openalerts …` calls. The tests run src/ itself.
import fs from 'node:fs';
import module from 'node:module';

const cli = new URL('../dist/cli.js', import.meta.url);
if (!fs.existsSync(cli)) {
  process.stderr.write('openalerts: the JavaScript build (dist/) is missing; run `npm run build` in the checkout (npm ci does it).\n');
  process.exit(1);
}
// Node ≥ 22.1 keeps compiled code of our modules and dependencies on disk between starts.
module.enableCompileCache?.();
await import(cli.href);
