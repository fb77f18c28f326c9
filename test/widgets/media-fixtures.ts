/**
 * Small, valid alert media built in memory (no files checked in): an animated GIF, a WAV beep, a
 * minimal WebM, and the hostile look-alikes the upload must refuse.
 */

/** GIF LZW for one frame of a single palette index: a clear code every two pixels, before the code size would grow, so every code stays minimum+1 bits. */
function gifFrameData(pixels: number, index: number): Buffer {
  const minCode = 2;
  const clear = 1 << minCode;
  const end = clear + 1;
  const codes: number[] = [];
  // Two literals add one table entry (6); a third would make the next code 8, which needs 4 bits.
  const perRun = 2;
  for (let i = 0; i < pixels; i++) {
    if (i % perRun === 0) codes.push(clear);
    codes.push(index);
  }
  codes.push(end);
  const bytes: number[] = [];
  let acc = 0;
  let bits = 0;
  for (const code of codes) {
    acc |= code << bits;
    bits += minCode + 1;
    while (bits >= 8) {
      bytes.push(acc & 0xff);
      acc >>= 8;
      bits -= 8;
    }
  }
  if (bits > 0) bytes.push(acc & 0xff);
  const blocks: number[] = [minCode];
  for (let i = 0; i < bytes.length; i += 255) {
    const chunk = bytes.slice(i, i + 255);
    blocks.push(chunk.length, ...chunk);
  }
  blocks.push(0);
  return Buffer.from(blocks);
}

/** An animated GIF, `size`×`size`, alternating magenta and cyan frames every 300 ms, looping. */
export function animatedGif(size = 96): Buffer {
  const parts: Buffer[] = [];
  const u16 = (n: number) => [n & 0xff, n >> 8];
  parts.push(Buffer.from('GIF89a', 'latin1'));
  parts.push(Buffer.from([...u16(size), ...u16(size), 0xf1, 0, 0])); // global colour table of 4
  parts.push(Buffer.from([0xff, 0x00, 0xff, 0x00, 0xe5, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00]));
  parts.push(Buffer.from([0x21, 0xff, 0x0b, ...Buffer.from('NETSCAPE2.0', 'latin1'), 0x03, 0x01, 0x00, 0x00, 0x00])); // loop forever
  for (const index of [0, 1]) {
    parts.push(Buffer.from([0x21, 0xf9, 0x04, 0x00, 30, 0, 0, 0])); // 300 ms
    parts.push(Buffer.from([0x2c, 0, 0, 0, 0, ...u16(size), ...u16(size), 0]));
    parts.push(gifFrameData(size * size, index));
  }
  parts.push(Buffer.from([0x3b]));
  return Buffer.concat(parts);
}

/** A 16-bit mono WAV: a `seconds`-long 880 Hz beep. */
export function wavBeep(seconds = 0.4, rate = 8000): Buffer {
  const n = Math.round(seconds * rate);
  const data = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++) data.writeInt16LE(Math.round(Math.sin((2 * Math.PI * 880 * i) / rate) * 12000), i * 2);
  const h = Buffer.alloc(44);
  h.write('RIFF', 0, 'latin1');
  h.writeUInt32LE(36 + data.length, 4);
  h.write('WAVEfmt ', 8, 'latin1');
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(rate, 24);
  h.writeUInt32LE(rate * 2, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36, 'latin1');
  h.writeUInt32LE(data.length, 40);
  return Buffer.concat([h, data]);
}

/** An EBML element: id bytes, an 8-byte size, the body. */
function ebml(id: number[], body: Buffer): Buffer {
  const size = Buffer.alloc(8);
  size.writeBigUInt64BE(BigInt(body.length) | (1n << 56n));
  return Buffer.concat([Buffer.from(id), size, body]);
}

/** The structure of a WebM file (EBML header with DocType webm, a Segment with a Cluster); not playable, but whole. */
export function minimalWebm(): Buffer {
  const header = ebml([0x1a, 0x45, 0xdf, 0xa3], Buffer.concat([ebml([0x42, 0x86], Buffer.from([1])), ebml([0x42, 0x82], Buffer.from('webm', 'latin1')), ebml([0x42, 0x87], Buffer.from([2]))]));
  const cluster = ebml([0x1f, 0x43, 0xb6, 0x75], Buffer.concat([ebml([0xe7], Buffer.from([0])), ebml([0xa3], Buffer.alloc(64, 7))]));
  const segment = ebml([0x18, 0x53, 0x80, 0x67], Buffer.concat([ebml([0x15, 0x49, 0xa9, 0x66], ebml([0x2a, 0xd7, 0xb1], Buffer.from([0x0f, 0x42, 0x40]))), cluster]));
  return Buffer.concat([header, segment]);
}

export const SCRIPT_AS_GIF = Buffer.from('<script>alert(document.cookie)</script>\n', 'utf8');
export const SVG_WITH_SCRIPT = Buffer.from('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script><rect width="10" height="10"/></svg>', 'utf8');
