/**
 * The web UI's service worker (bundled into dist/public/sw.js, served at /os/sw.js). It keeps the
 * app shell only: the page script, the icons and the manifest, so that the installed app starts
 * and draws its frame without a round trip. Pages and API answers always go to the hub (they
 * carry the home's live state and a person's session); nothing else is ever cached.
 */

// The few service worker types used here. TypeScript's WebWorker library cannot be loaded beside
// the DOM library the page script needs, so they are declared for this module alone.
interface ExtendableEvent extends Event {
  waitUntil(work: Promise<unknown>): void;
}
interface FetchEvent extends ExtendableEvent {
  readonly request: Request;
  respondWith(response: Promise<Response>): void;
}
interface ShellWorkerScope {
  readonly location: Location;
  readonly clients: { claim(): Promise<void> };
  skipWaiting(): Promise<void>;
  addEventListener(type: 'install' | 'activate', listener: (event: ExtendableEvent) => void): void;
  addEventListener(type: 'fetch', listener: (event: FetchEvent) => void): void;
}
declare const self: ShellWorkerScope;
/** Set by the build: a new build starts a new cache and drops the old one. */
declare const BUILD_ID: string;

const CACHE = `hcs-shell-${BUILD_ID}`;
const SHELL = /^\/os\/(assets\/|manifest\.webmanifest$)/;

self.addEventListener('install', () => {
  void self.skipWaiting();
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    (async () => {
      for (const name of await caches.keys()) if (name !== CACHE) await caches.delete(name);
      await self.clients.claim();
    })(),
  );
});

self.addEventListener('fetch', (event) => {
  const url = new URL(event.request.url);
  if (event.request.method !== 'GET' || url.origin !== self.location.origin || !SHELL.test(url.pathname)) return;
  event.respondWith(
    (async () => {
      const cache = await caches.open(CACHE);
      const kept = await cache.match(event.request);
      if (kept) return kept;
      const response = await fetch(event.request);
      if (response.ok) await cache.put(event.request, response.clone());
      return response;
    })(),
  );
});

export {};
