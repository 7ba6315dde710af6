import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Type } from 'typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ErrorBody } from '../errors.js';
import { httpErrors } from '../failures.js';
import { HOME_AREA } from './area.js';

/**
 * The web UI's client files: the script bundle `npm run build` (and so `npm ci`) makes from
 * `client/home.ts` with esbuild, the service worker, the icons and the web app manifest. They are
 * read once, at start, from `dist/public/` (where the build writes them); the service run from
 * its sources (tests, `npm run dev`) finds the same folder beside `src/`.
 */
const PUBLIC_DIRS = ['../../../public/', '../../../../dist/public/'].map((relative) => new URL(relative, import.meta.url));

function publicDir(): URL | undefined {
  return PUBLIC_DIRS.find((dir) => fs.existsSync(fileURLToPath(new URL('home.js', dir))));
}

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
};

function loadAssets(): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  const dir = publicDir();
  if (!dir) return assets;
  for (const name of fs.readdirSync(dir)) {
    const type = TYPES[name.slice(name.lastIndexOf('.'))];
    if (!type || name.endsWith('.map')) continue;
    const body = fs.readFileSync(new URL(name, dir));
    assets.set(name, { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 16)}"` });
  }
  return assets;
}

const assets = loadAssets();

/** The page script's URL; its version in the query makes a new build a new URL, so it may be cached for good. */
export const CLIENT_SCRIPT = `/os/assets/home.js?v=${assets.get('home.js')?.etag.slice(1, 9) ?? 'missing'}`;

/** The manifest that makes the web UI an installable app (the icons are drawn by scripts/build-client.mjs). */
export const MANIFEST = {
  name: 'Home Control',
  short_name: 'Home',
  description: 'Your home: rooms, devices, scenes and what is playing.',
  start_url: '/os/',
  scope: '/os/',
  display: 'standalone',
  background_color: '#0f1b29',
  theme_color: '#14324f',
  icons: [
    { src: '/os/assets/icon-192.png', sizes: '192x192', type: 'image/png' },
    { src: '/os/assets/icon-512.png', sizes: '512x512', type: 'image/png' },
    { src: '/os/assets/icon-512.png', sizes: '512x512', type: 'image/png', purpose: 'maskable' },
  ],
};

/** `/os/assets/:name`, `/os/manifest.webmanifest` and `/os/sw.js` (which must sit at the scope it controls). */
export function clientAssetRoutes(app: FastifyInstance): void {
  const send = (name: string, cache: string) => async (request: FastifyRequest, reply: FastifyReply) => {
    const asset = assets.get(name);
    // Not built (`npm run build` writes them) or no such file: as any path that serves nothing.
    if (!asset) throw httpErrors.ROUTE_NOT_FOUND({ method: request.method, path: request.url });
    reply.header('etag', asset.etag).header('cache-control', cache).type(asset.type);
    if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send();
    return reply.send(asset.body);
  };
  const schema = (summary: string) => ({ tags: [HOME_AREA.tag], summary, security: [], response: { 200: Type.String(), 304: Type.Null(), '4xx': ErrorBody } });
  app.get(
    '/assets/:name',
    { config: { access: 'public' }, schema: { ...schema('Web UI client files: the page script, icons.'), params: Type.Object({ name: Type.String({ pattern: '^[a-z0-9-]+\\.(js|png|svg)$', maxLength: 64 }) }) } },
    async (request, reply) => send((request.params as { name: string }).name, 'public, max-age=31536000, immutable')(request, reply),
  );
  // The worker is looked at on every visit: it must never be cached for long, or an update would not reach anyone.
  app.get('/sw.js', { config: { access: 'public' }, schema: schema('Web UI service worker: keeps the app shell (script, icons) for offline start; never API answers.') }, async (request, reply) =>
    send('sw.js', 'no-cache')(request, reply.header('service-worker-allowed', '/os/')),
  );
  app.get('/manifest.webmanifest', { config: { access: 'public' }, schema: { ...schema('Web UI web app manifest.'), response: { 200: Type.Unknown(), '4xx': ErrorBody } } }, async (_request, reply) =>
    reply.type('application/manifest+json').header('cache-control', 'no-cache').send(JSON.stringify(MANIFEST)),
  );
}
