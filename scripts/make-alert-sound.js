#!/usr/bin/env node
// Writes src/web/static/alert-default.wav, the bundled alert sound: a bright three-note chime
// (E6, G#6, B6, an E major arpeggio), each note a sine with a soft overtone and an exponential
// decay. Synthesized here, so the sound is ours and ships under the project licence
// (src/web/static/ALERT-ASSETS.md). Run it again to regenerate the same file byte for byte.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const RATE = 22050;
const SECONDS = 1.4;
const NOTES = [
  { at: 0, hz: 1318.51 },
  { at: 0.12, hz: 1661.22 },
  { at: 0.24, hz: 1975.53 },
];

const samples = new Float64Array(Math.round(RATE * SECONDS));
for (const note of NOTES) {
  const start = Math.round(note.at * RATE);
  for (let i = start; i < samples.length; i++) {
    const t = (i - start) / RATE;
    const attack = Math.min(1, t / 0.005);
    const decay = Math.exp(-t * 4.5);
    samples[i] += attack * decay * (Math.sin(2 * Math.PI * note.hz * t) + 0.25 * Math.sin(2 * Math.PI * note.hz * 2 * t));
  }
}
let peak = 0;
for (const s of samples) peak = Math.max(peak, Math.abs(s));

const data = Buffer.alloc(samples.length * 2);
samples.forEach((s, i) => data.writeInt16LE(Math.round((s / peak) * 0.8 * 32767), i * 2));
const header = Buffer.alloc(44);
header.write('RIFF', 0, 'latin1');
header.writeUInt32LE(36 + data.length, 4);
header.write('WAVE', 8, 'latin1');
header.write('fmt ', 12, 'latin1');
header.writeUInt32LE(16, 16); // fmt chunk size
header.writeUInt16LE(1, 20); // PCM
header.writeUInt16LE(1, 22); // mono
header.writeUInt32LE(RATE, 24);
header.writeUInt32LE(RATE * 2, 28); // bytes per second
header.writeUInt16LE(2, 32); // block align
header.writeUInt16LE(16, 34); // bits per sample
header.write('data', 36, 'latin1');
header.writeUInt32LE(data.length, 40);

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'src/web/static/alert-default.wav');
fs.writeFileSync(out, Buffer.concat([header, data]));
console.log(`${path.relative(root, out)}: ${header.length + data.length} bytes`);
