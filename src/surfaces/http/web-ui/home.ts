import type { FastifyInstance } from 'fastify';
import type { Hub } from '../../../hub.js';
import type { PendingPairing } from '../../../domain/remotes/pairing.js';
import type { Operation } from '../../../platform/operations.js';
import { defined, text } from '../web/forms.js';
import { csrfField, html, raw, type Html } from '../web/html.js';
import { bindAreaForm, bindPage, optionalPart, type PageContext } from '../web/pages.js';
import { HOME_AREA } from './area.js';
import { CLIENT_SCRIPT } from './client-assets.js';
import { pairingSection } from './remotes.js';
import { noDevicesYet, welcomeFirst, welcomeReminder } from './settings.js';
import { deviceTile, paramsOf, type TileDevice } from './tiles.js';

interface Overview {
  spaces: Array<{ space: { id: string; name: string }; sources: Array<{ id: string; label: string; active: boolean }>; devices: Array<{ device: TileDevice }> }>;
  unplaced: Array<{ device: TileDevice }>;
}

interface QuickAction {
  kind: 'scene' | 'preset' | 'program';
  id: string;
  name: string;
}

/**
 * What the account may list of an optional part of the page: a part the account's scope or role
 * does not reach (the favourites are the OS API's) is left out rather than failing the page.
 */
async function mayList<T>(ctx: PageContext, operation: Operation, pick: (answer: never) => T[]): Promise<T[]> {
  const part = await optionalPart(() => ctx.call<never>(operation), (err) => err.kind === 'forbidden');
  return 'value' in part ? pick(part.value) : [];
}

function quickActions(actions: QuickAction[], csrf: string): Html {
  if (actions.length === 0) return html``;
  const action = (a: QuickAction) =>
    html`<form method="post" action="/os/${a.kind === 'scene' ? 'scenes' : a.kind === 'preset' ? 'presets' : 'programs'}/${encodeURIComponent(a.id)}/run">${csrfField(csrf)}<button class="quick" data-quick="${a.kind}" aria-label="Run ${a.name}">${a.name}</button></form>`;
  return html`<section aria-labelledby="quick" class="quick-actions"><h2 id="quick">Scenes and programs</h2><div class="buttons">${actions.map(action)}</div></section>`;
}

/** The household's home page: the hub's status, one-tap scenes and programs, favourites, then each room with its devices' tiles. */
export function homePage(app: FastifyInstance, hub: Hub): void {
  const { devices, home, remotes, scenes, programs } = hub.ops;
  // While the first-run onboarding is not done (and no device is in yet), an administrator starts there.
  app.addHook('preHandler', welcomeFirst(hub));
  bindPage(app, hub, HOME_AREA, {
    url: '/',
    title: 'Home',
    summary: 'Web UI: favourites and each room with a tile per device (drawn from its class), scenes and programs to run, remotes waiting to pair.',
    async build(ctx) {
      const { csrf } = ctx;
      const [overview, { requests }, favourites, sceneList, presetList, programList, settings] = await Promise.all([
        ctx.call<Overview>(home.overview),
        ctx.call<{ requests: PendingPairing[] }>(remotes.pairingList),
        mayList(ctx, home.getFavorites, (a: { favorites: string[] }) => a.favorites),
        mayList(ctx, scenes.listScenes, (a: { scenes: Array<{ id: string; name: string }> }) => a.scenes),
        mayList(ctx, home.listPresets, (a: { presets: Array<{ id: string; name: string; kind: string }> }) => a.presets),
        mayList(ctx, programs.list, (a: { programs: Array<{ id: string; name: string }> }) => a.programs),
        ctx.role === 'admin' ? ctx.call<{ onboardedAt: number | null }>(home.getSettings) : undefined,
      ]);
      const tile = ({ device }: { device: TileDevice }) => deviceTile(device, csrf);
      const everyDevice = new Map([...overview.spaces.flatMap((s) => s.devices), ...overview.unplaced].map((d) => [d.device.id, d]));
      const favouriteTiles = favourites.flatMap((id) => {
        const entry = everyDevice.get(id);
        return entry ? [entry] : [];
      });
      const actions: QuickAction[] = [
        ...sceneList.map((s) => ({ kind: 'scene' as const, id: s.id, name: s.name })),
        // A program's preset is the program itself, listed below.
        ...presetList.filter((p) => p.kind !== 'program').map((p) => ({ kind: 'preset' as const, id: p.id, name: p.name })),
        ...programList.map((p) => ({ kind: 'program' as const, id: p.id, name: p.name })),
      ];
      const rooms: Html[] = overview.spaces.map(
        ({ space, sources, devices: inSpace }) => html`<section aria-labelledby="space-${space.id}" data-space="${space.id}" class="room"><h2 id="space-${space.id}">${space.name}</h2>
${sources.length > 0 ? html`<div class="buttons">${sources.map(
          (s) => html`<form method="post" action="/os/spaces/${space.id}/activate">${csrfField(csrf)}<input type="hidden" name="sourceId" value="${s.id}"><button class="${s.active ? '' : 'secondary'}" aria-pressed="${s.active ? 'true' : 'false'}">${s.label}</button></form>`,
        )}</div>` : ''}
<div class="tiles">${inSpace.map(tile)}</div>${inSpace.length === 0 ? html`<p class="muted">No devices here.</p>` : ''}</section>`,
      );
      if (overview.unplaced.length > 0) rooms.push(html`<section aria-labelledby="space-none" class="room"><h2 id="space-none">Not in a room</h2><div class="tiles">${overview.unplaced.map(tile)}</div></section>`);
      return html`<p id="hub-status" class="hub-status" role="status" data-status="online">Hub online</p>
${requests.length > 0 ? pairingSection(requests, csrf) : ''}
${quickActions(actions, csrf)}
${favouriteTiles.length > 0 ? html`<section aria-labelledby="favourites" class="room"><h2 id="favourites">Favourites</h2><div class="tiles">${favouriteTiles.map((d) => deviceTile({ ...d.device, domPrefix: 'fav-' }, csrf))}</div></section>` : ''}
${rooms}${rooms.length === 0 ? html`<p>No devices yet.</p>` : ''}${everyDevice.size === 0 ? noDevicesYet(ctx.role) : settings?.onboardedAt === null ? welcomeReminder : ''}
<script type="application/json" id="readings">${raw(JSON.stringify(Object.fromEntries([...everyDevice].map(([id, d]) => [id, d.device.reading]))).replace(/</g, '\\u003c'))}</script>`;
    },
    scriptUrl: CLIENT_SCRIPT,
  });

  bindAreaForm(app, hub, HOME_AREA, {
    url: '/devices/:id/command',
    summary: "Web UI form: send a device a command (`command`, params as `p.<name>:<type>` fields; a `:hs` colour `#rrggbb` becomes hue and saturation).",
    operation: devices.command,
    input: (f, p) => ({ json: defined({ command: text(f, 'command'), params: paramsOf(f) }), text: { params: { id: p.id } } }),
    back: () => '/os/',
    done: (_r, f) => `${String(f.command)}: done.`,
  });
  bindAreaForm(app, hub, HOME_AREA, {
    url: '/spaces/:id/activate',
    summary: "Web UI form: activate one of a room's sources (`sourceId`).",
    operation: home.activateSource,
    input: (f, p) => ({ json: {}, text: { params: { id: p.id, sourceId: text(f, 'sourceId') } } }),
    back: () => '/os/',
    done: (r) => `${(r as { source: { label: string } }).source.label} is on.`,
  });
  bindAreaForm(app, hub, HOME_AREA, {
    url: '/scenes/:id/run',
    summary: 'Web UI form: run a scene (`<deviceId>:<sceneId>`).',
    operation: scenes.runScene,
    input: (_f, p) => ({ json: { sceneId: p.id } }),
    back: () => '/os/',
    done: () => 'The scene is on.',
  });
  bindAreaForm(app, hub, HOME_AREA, {
    url: '/presets/:id/run',
    summary: 'Web UI form: run an activity preset.',
    operation: home.runPreset,
    input: (_f, p) => ({ json: {}, text: { params: { id: p.id } } }),
    back: () => '/os/',
    done: () => 'Done.',
  });
}
