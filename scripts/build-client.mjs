// The household web UI's client files, written to dist/public/ by `npm run build` (so by `npm ci`
// too): the page script and the service worker, each bundled and minified by esbuild from
// src/surfaces/http/web-ui/client/, and the app icons. The service reads them at start
// (src/surfaces/http/web-ui/client-assets.ts).
//
// The icons are drawn here rather than kept as binary files or made with an image library: a
// white house on the banner's blue, kept inside the central 80 % that a "maskable" icon may
// show, encoded as PNG with node:zlib. Nothing to install, and one place to change them.
import * as esbuild from 'esbuild';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const CLIENT = 'src/surfaces/http/web-ui/client';

/** CRC-32 of PNG chunks. */
const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(bytes) {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type, data) {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'ascii');
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}

/** An RGB PNG of `size` pixels square, each pixel from `colourAt(x, y)` as [r, g, b], x and y in 0–1. */
function png(size, colourAt) {
  const raw = Buffer.alloc(size * (size * 3 + 1));
  for (let y = 0; y < size; y++) {
    const row = y * (size * 3 + 1);
    raw[row] = 0; // filter: none
    for (let x = 0; x < size; x++) raw.set(colourAt((x + 0.5) / size, (y + 0.5) / size), row + 1 + x * 3);
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8 bits per channel, RGB
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', zlib.deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

const BLUE = [0x14, 0x32, 0x4f];
const WHITE = [0xff, 0xff, 0xff];

/** A house: a roof (triangle) over a body with a door, inside the maskable safe zone. */
function house(x, y) {
  const roof = y >= 0.26 && y <= 0.5 && Math.abs(x - 0.5) <= ((y - 0.26) / 0.24) * 0.3;
  const body = y > 0.5 && y <= 0.74 && x >= 0.3 && x <= 0.7;
  const door = y > 0.58 && y <= 0.74 && x >= 0.45 && x <= 0.55;
  return (roof || body) && !door ? WHITE : BLUE;
}

/** Builds the client files into `outDir` (dist/public). */
export async function buildClient(root, outDir) {
  fs.mkdirSync(outDir, { recursive: true });
  const common = { absWorkingDir: root, bundle: true, minify: true, format: 'iife', target: ['chrome100', 'firefox100', 'safari15'], logLevel: 'warning', legalComments: 'none' };
  const page = await esbuild.build({ ...common, entryPoints: [`${CLIENT}/home.ts`], write: false, outfile: path.join(outDir, 'home.js') });
  const buildId = createHash('sha256').update(page.outputFiles[0].contents).digest('hex').slice(0, 12);
  const worker = await esbuild.build({ ...common, entryPoints: [`${CLIENT}/sw.ts`], write: false, outfile: path.join(outDir, 'sw.js'), define: { BUILD_ID: JSON.stringify(buildId) } });
  for (const file of [...page.outputFiles, ...worker.outputFiles]) fs.writeFileSync(file.path, file.contents);
  for (const size of [192, 512]) fs.writeFileSync(path.join(outDir, `icon-${size}.png`), png(size, house));
  return { bytes: page.outputFiles[0].contents.length, gzipped: zlib.gzipSync(page.outputFiles[0].contents).length };
}
