#!/usr/bin/env node
// The CLI runs the TypeScript sources directly through tsx, so a checkout needs no build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli.ts');
