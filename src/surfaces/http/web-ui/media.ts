import type { FastifyInstance } from 'fastify';
import type { Hub } from '../../../hub.js';
import { defined, num, text } from '../web/forms.js';
import { csrfField, html } from '../web/html.js';
import { bindAreaForm, bindPage } from '../web/pages.js';
import { HOME_AREA } from './area.js';

interface Zone {
  id: string;
  name: string;
  devices: Array<{ id: string; name: string; online: boolean; volumeCapable: boolean; volume: number | null }>;
}

interface Player {
  id: string;
  name: string;
  room: string | null;
  online: boolean;
  capabilities: string[];
  volume: number | null;
  muted: boolean | null;
  nowPlaying: { playback: string | null; app: string | null; title: string | null; artist: string | null } | null;
}

/** Buttons for the commands a player takes now, in the order a remote has them. */
const BUTTONS: Array<[command: string, label: string]> = [
  ['previous', '⏮ Previous'],
  ['play', '▶ Play'],
  ['pause', '⏸ Pause'],
  ['stop', '⏹ Stop'],
  ['next', '⏭ Next'],
  ['mute', 'Mute'],
  ['power_on', 'On'],
  ['power_off', 'Off'],
];

/** Zones with their volume, and the media players: what plays now, and their controls. */
export function mediaPage(app: FastifyInstance, hub: Hub): void {
  const { home, media } = hub.ops;
  bindPage(app, hub, HOME_AREA, {
    url: '/media',
    title: 'Zones and media',
    summary: 'Web UI: zones with volume; players with what they play and their controls.',
    async build({ call, csrf }) {
      const { zones } = await call<{ zones: Zone[] }>(home.listZones);
      const { players } = await call<{ players: Player[] }>(media.players);
      return html`<section aria-labelledby="zones"><h2 id="zones">Zones</h2>${zones.length === 0 ? html`<p class="muted">No zones.</p>` : ''}
<div class="grid">${zones.map((z) => {
        const levels = z.devices.filter((d) => d.volumeCapable && d.volume !== null).map((d) => d.volume as number);
        const level = levels.length > 0 ? Math.round(levels.reduce((a, b) => a + b, 0) / levels.length) : 30;
        return html`<article class="card" data-zone="${z.id}"><h3>${z.name}</h3><p class="muted">${z.devices.map((d) => `${d.name}${d.volume !== null ? ` ${d.volume}` : ''}`).join(', ')}</p>
<form method="post" action="/os/zones/${z.id}/volume" class="row">${csrfField(csrf)}<label>Volume of ${z.name} <input type="range" name="volume" min="0" max="100" value="${level}"></label><button>Set</button></form>
<div class="row" style="display:flex;gap:.4rem"><form method="post" action="/os/zones/${z.id}/volume">${csrfField(csrf)}<input type="hidden" name="delta" value="-5"><button class="secondary" aria-label="${z.name} quieter">−5</button></form>
<form method="post" action="/os/zones/${z.id}/volume">${csrfField(csrf)}<input type="hidden" name="delta" value="5"><button class="secondary" aria-label="${z.name} louder">+5</button></form></div></article>`;
      })}</div></section>
<section aria-labelledby="players"><h2 id="players">Now playing</h2>${players.length === 0 ? html`<p class="muted">No players.</p>` : ''}
<div class="grid">${players.map(
        (p) => html`<article class="card" data-player="${p.id}"><h3>${p.name} <span class="badge ${p.online ? 'online' : 'offline'}">${p.online ? 'online' : 'offline'}</span></h3>
<p>${p.nowPlaying?.title ? html`<b>${p.nowPlaying.title}</b>${p.nowPlaying.artist ? ` · ${p.nowPlaying.artist}` : ''}` : p.nowPlaying?.app ? p.nowPlaying.app : html`<span class="muted">Nothing playing</span>`}
${p.nowPlaying?.playback ? html` <span class="badge">${p.nowPlaying.playback}</span>` : ''}${p.volume !== null ? html` · volume ${p.volume}${p.muted ? ' (muted)' : ''}` : ''}</p>
<div class="row" style="display:flex;gap:.3rem;flex-wrap:wrap">${BUTTONS.filter(([c]) => p.capabilities.includes(c)).map(
          ([command, label]) => html`<form method="post" action="/os/players/${p.id}/command">${csrfField(csrf)}<input type="hidden" name="command" value="${command}"><button class="secondary" aria-label="${label} (${p.name})">${label}</button></form>`,
        )}</div>
${p.capabilities.includes('volume_step') ? html`<div class="row" style="display:flex;gap:.3rem">${[-5, 5].map(
          (delta) => html`<form method="post" action="/os/players/${p.id}/command">${csrfField(csrf)}<input type="hidden" name="command" value="volume_step"><input type="hidden" name="delta" value="${delta}"><button class="secondary" aria-label="${p.name} ${delta < 0 ? 'quieter' : 'louder'}">Volume ${delta < 0 ? '−' : '+'}</button></form>`,
        )}</div>` : ''}
${p.capabilities.includes('volume_set') ? html`<form method="post" action="/os/players/${p.id}/command" class="row">${csrfField(csrf)}<input type="hidden" name="command" value="volume_set"><label>Volume of ${p.name} <input type="number" name="volume" min="0" max="100" value="${p.volume ?? 20}"></label><button class="secondary">Set</button></form>` : ''}</article>`,
      )}</div></section>`;
    },
  });

  bindAreaForm(app, hub, HOME_AREA, {
    url: '/zones/:id/volume',
    summary: "Web UI form: a zone's volume (`volume` 0–100, or `delta`).",
    operation: home.zoneVolume,
    input: (f, p) => ({ json: defined({ volume: num(f, 'volume'), delta: num(f, 'delta') }), text: { params: { id: p.id } } }),
    back: () => '/os/media',
    done: () => 'Volume set.',
  });
  bindAreaForm(app, hub, HOME_AREA, {
    url: '/players/:id/command',
    summary: 'Web UI form: a player command (`command`; `volume` for volume_set, `delta` for volume_step).',
    operation: media.command,
    input: (f, p) => {
      const command = text(f, 'command');
      const params = command === 'volume_set' ? { volume: num(f, 'volume') } : command === 'volume_step' ? { delta: num(f, 'delta') } : undefined;
      return { json: defined({ command, params }), text: { params: { id: p.id } } };
    },
    back: () => '/os/media',
    done: (_r, f) => `${String(f.command)}: done.`,
  });
}
