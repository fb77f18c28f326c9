/**
 * Is a recognised file whole? `file-type` names a file by its first bytes, so a download cut off
 * half-way is still "a WebM"; the widget would then show a broken image or stop a sound mid-way.
 * Each check walks the container's own structure (chunks, blocks, pages, elements, frames) and
 * answers false when a part claims more bytes than the file has. It never decodes the media.
 */

/** Container of each content type we accept. */
export type Container = 'png' | 'gif' | 'jpeg' | 'riff' | 'ebml' | 'ogg' | 'mp3';

/** PNG: chunks (length, type, data, CRC) up to IEND. */
function pngComplete(b: Buffer): boolean {
  let at = 8;
  while (at + 12 <= b.length) {
    const length = b.readUInt32BE(at);
    const type = b.toString('latin1', at + 4, at + 8);
    at += 12 + length;
    if (at > b.length) return false;
    if (type === 'IEND') return true;
  }
  return false;
}

/** GIF: header, colour table, then extension and image blocks (sub-blocks end with 0) up to the 0x3B trailer. */
function gifComplete(b: Buffer): boolean {
  if (b.length < 13) return false;
  let at = 13;
  const flags = b[10]!;
  if (flags & 0x80) at += 3 * 2 ** ((flags & 7) + 1);
  const skipSubBlocks = (): boolean => {
    while (at < b.length) {
      const size = b[at]!;
      at += 1 + size;
      if (size === 0) return at <= b.length;
    }
    return false;
  };
  while (at < b.length) {
    const block = b[at]!;
    if (block === 0x3b) return true;
    if (block === 0x21) {
      at += 2;
      if (!skipSubBlocks()) return false;
    } else if (block === 0x2c) {
      if (at + 10 > b.length) return false;
      const imageFlags = b[at + 9]!;
      at += 10;
      if (imageFlags & 0x80) at += 3 * 2 ** ((imageFlags & 7) + 1);
      at += 1; // LZW minimum code size
      if (!skipSubBlocks()) return false;
    } else {
      return false;
    }
  }
  return false;
}

/** JPEG: the end-of-image marker comes after the last start-of-scan. */
function jpegComplete(b: Buffer): boolean {
  const eoi = b.lastIndexOf(Buffer.from([0xff, 0xd9]));
  return eoi > 0 && eoi > b.lastIndexOf(Buffer.from([0xff, 0xda]));
}

/** RIFF (WAV, WebP): the size in the header covers the file. */
function riffComplete(b: Buffer): boolean {
  return b.length >= 12 && b.readUInt32LE(4) + 8 <= b.length;
}

/** An EBML variable-length integer at `at`: its byte length and value (`unknown`: all value bits set). */
function vint(b: Buffer, at: number, keepMarker: boolean): { length: number; value: number; unknown: boolean } | null {
  if (at >= b.length) return null;
  const first = b[at]!;
  let length = 1;
  while (length <= 8 && !(first & (0x80 >> (length - 1)))) length++;
  if (length > 8 || at + length > b.length) return null;
  let value = keepMarker ? first : first & (0xff >> length);
  let allOnes = value === 0xff >> length;
  for (let i = 1; i < length; i++) {
    value = value * 256 + b[at + i]!;
    if (b[at + i] !== 0xff) allOnes = false;
  }
  return { length, value, unknown: !keepMarker && allOnes };
}

const EBML_SEGMENT = 0x18538067;
const EBML_CLUSTER = 0x1f43b675;

/**
 * WebM (EBML): the header element, then the Segment. A Segment (or Cluster) of unknown size, as
 * live recorders write, is walked element by element; every element must end within the file.
 */
function ebmlComplete(b: Buffer): boolean {
  let at = 0;
  let sawSegment = false;
  const walk = (end: number, depth: number): boolean => {
    while (at < end) {
      const id = vint(b, at, true);
      if (!id) return false;
      const size = vint(b, at + id.length, false);
      if (!size) return false;
      at += id.length + size.length;
      if (id.value === EBML_SEGMENT) sawSegment = true;
      if (size.unknown) {
        // Its children follow inline up to the end of the file: keep walking them at this level.
        if (id.value !== EBML_SEGMENT && id.value !== EBML_CLUSTER) return false;
        continue;
      }
      if (at + size.value > b.length) return false;
      if (id.value === EBML_SEGMENT && depth === 0) {
        if (!walk(at + size.value, depth + 1)) return false;
      } else {
        at += size.value;
      }
    }
    return at === end;
  };
  return walk(b.length, 0) && sawSegment;
}

/** Ogg: whole pages ("OggS", 27-byte header, segment table, body) to the end; the last page ends the stream. */
function oggComplete(b: Buffer): boolean {
  let at = 0;
  let lastFlags = 0;
  while (at < b.length) {
    if (at + 27 > b.length || b.toString('latin1', at, at + 4) !== 'OggS') return false;
    const segments = b[at + 26]!;
    if (at + 27 + segments > b.length) return false;
    let body = 0;
    for (let i = 0; i < segments; i++) body += b[at + 27 + i]!;
    lastFlags = b[at + 5]!;
    at += 27 + segments + body;
    if (at > b.length) return false;
  }
  return (lastFlags & 0x04) !== 0;
}

const MP3_BITRATES: Record<string, number[]> = {
  // kbit/s by index, Layer III; MPEG-1 and MPEG-2/2.5.
  v1: [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  v2: [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
};
const MP3_RATES: Record<number, number[]> = { 3: [44100, 48000, 32000], 2: [22050, 24000, 16000], 0: [11025, 12000, 8000] };

/**
 * MP3: skip an ID3v2 tag, then walk Layer III frames by their headers. A frame that runs past the
 * end is a cut file; anything that is not a frame header (an ID3v1 or APE tag, padding) ends the walk.
 */
function mp3Complete(b: Buffer): boolean {
  let at = 0;
  if (b.toString('latin1', 0, 3) === 'ID3') {
    if (b.length < 10) return false;
    at = 10 + (((b[6]! & 0x7f) << 21) | ((b[7]! & 0x7f) << 14) | ((b[8]! & 0x7f) << 7) | (b[9]! & 0x7f));
    if (b[5]! & 0x10) at += 10; // footer
    if (at > b.length) return false;
  }
  let frames = 0;
  while (at + 4 <= b.length) {
    if (b[at] !== 0xff || (b[at + 1]! & 0xe0) !== 0xe0) break;
    const version = (b[at + 1]! >> 3) & 3; // 3: MPEG-1, 2: MPEG-2, 0: MPEG-2.5
    const layer = (b[at + 1]! >> 1) & 3; // 1: Layer III
    const bitrateIndex = b[at + 2]! >> 4;
    const rateIndex = (b[at + 2]! >> 2) & 3;
    const padding = (b[at + 2]! >> 1) & 1;
    if (version === 1 || layer !== 1 || bitrateIndex === 0 || bitrateIndex === 15 || rateIndex === 3) break;
    const bitrate = MP3_BITRATES[version === 3 ? 'v1' : 'v2']![bitrateIndex]! * 1000;
    const rate = MP3_RATES[version]![rateIndex]!;
    const length = Math.floor(((version === 3 ? 144 : 72) * bitrate) / rate) + padding;
    if (at + length > b.length) return false;
    at += length;
    frames++;
  }
  return frames > 0;
}

const CHECKS: Record<Container, (b: Buffer) => boolean> = {
  png: pngComplete, gif: gifComplete, jpeg: jpegComplete, riff: riffComplete, ebml: ebmlComplete, ogg: oggComplete, mp3: mp3Complete,
};

export function isComplete(container: Container, data: Buffer): boolean {
  return CHECKS[container](data);
}
