import type { FastifyInstance } from 'fastify';
import type { Hub } from '../../../hub.js';
import { text } from '../web/forms.js';
import { csrfField, html, type Html } from '../web/html.js';
import { bindAreaForm, bindPage } from '../web/pages.js';
import { HOME_AREA } from './area.js';

interface Space {
  id: string;
  name: string;
}

interface Device {
  id: string;
  name: string;
  room: string | null;
  deviceClass: string;
}

const CLASS_WORDS: Record<string, string> = { media_player: 'media player', binary_sensor: 'binary sensor' };

/** Rooms, for administrators: create, rename and remove rooms, and move devices between them. */
export function roomsPage(app: FastifyInstance, hub: Hub): void {
  const { home, devices } = hub.ops;
  bindPage(app, hub, HOME_AREA, {
    url: '/rooms',
    title: 'Rooms',
    summary: 'Web UI: the rooms, and which room each device is in; administrators create, rename and remove rooms and move devices.',
    async build({ call, csrf, role }) {
      const [{ spaces }, { devices: list }] = await Promise.all([call<{ spaces: Space[] }>(home.listSpaces), call<{ devices: Device[] }>(devices.list)]);
      const admin = role === 'admin';
      const roomName = new Map(spaces.map((s) => [s.id, s.name]));
      const sorted = [...list].sort((a, b) => (roomName.get(a.room ?? '') ?? '\uffff').localeCompare(roomName.get(b.room ?? '') ?? '\uffff') || a.name.localeCompare(b.name));
      const roomSelect = (device: Device): Html =>
        html`<label for="room-${device.id}" class="visually-hidden">Room of ${device.name}</label><select id="room-${device.id}" name="spaceId"><option value=""${device.room ? '' : html` selected`}>No room</option>${spaces.map(
          (s) => html`<option value="${s.id}"${s.id === device.room ? html` selected` : ''}>${s.name}</option>`,
        )}</select>`;
      return html`${admin
        ? html`<section aria-labelledby="new-room"><h2 id="new-room">New room</h2><form method="post" action="/os/rooms/save" class="row">${csrfField(csrf)}<label for="new-room-name">Name</label><input id="new-room-name" name="name" required maxlength="100"><button>Create room</button></form></section>`
        : html`<p class="muted">Only administrators arrange rooms.</p>`}
<section aria-labelledby="room-list"><h2 id="room-list">Rooms</h2>${spaces.length === 0 ? html`<p class="muted">No rooms yet.</p>` : ''}
<ul class="plain">${spaces.map(
        (s) => html`<li data-room="${s.id}">${admin
          ? html`<form method="post" action="/os/rooms/save" class="row">${csrfField(csrf)}<input type="hidden" name="id" value="${s.id}"><label for="name-${s.id}" class="visually-hidden">Name of ${s.name}</label><input id="name-${s.id}" name="name" value="${s.name}" required maxlength="100"><button class="secondary" aria-label="Rename ${s.name}">Rename</button></form>
<details><summary>Remove ${s.name}…</summary><p>Its devices stay, in no room.</p><form method="post" action="/os/rooms/${s.id}/remove">${csrfField(csrf)}<button class="danger">Remove ${s.name}</button></form></details>`
          : html`${s.name}`}</li>`,
      )}</ul></section>
<section aria-labelledby="device-rooms"><h2 id="device-rooms">Devices</h2>${list.length === 0 ? html`<p class="muted">No devices yet.</p>` : ''}
<div class="scroll" tabindex="0"><table><thead><tr><th>Device</th><th>Kind</th><th>Room</th></tr></thead><tbody>${sorted.map(
        (d) => html`<tr data-device="${d.id}"><td>${d.name}</td><td>${CLASS_WORDS[d.deviceClass] ?? d.deviceClass}</td><td>${admin
          ? html`<form method="post" action="/os/devices/${d.id}/room" class="row">${csrfField(csrf)}${roomSelect(d)}<button class="secondary" aria-label="Move ${d.name}">Move</button></form>`
          : (roomName.get(d.room ?? '') ?? 'No room')}</td></tr>`,
      )}</tbody></table></div></section>`;
    },
  });

  bindAreaForm(app, hub, HOME_AREA, {
    url: '/rooms/save',
    summary: 'Web UI form: create a room (`name`) or rename one (`id`, `name`).',
    operation: home.saveSpace,
    input: (f) => ({ json: { ...(text(f, 'id') ? { id: text(f, 'id') } : {}), name: text(f, 'name') } }),
    back: () => '/os/rooms',
    done: (r, f) => (text(f, 'id') ? `Renamed to ${(r as Space).name}.` : `Room ${(r as Space).name} created.`),
  });
  bindAreaForm(app, hub, HOME_AREA, {
    url: '/rooms/:id/remove',
    summary: 'Web UI form: remove a room; its devices stay, in no room.',
    operation: home.removeSpace,
    input: (_f, p) => ({ json: {}, text: { params: { id: p.id } } }),
    back: () => '/os/rooms',
    done: (r) => {
      const n = (r as { unassignedDevices: string[] }).unassignedDevices.length;
      return n === 0 ? 'Room removed.' : `Room removed; ${n === 1 ? 'its device is' : `its ${n} devices are`} in no room now.`;
    },
  });
  bindAreaForm(app, hub, HOME_AREA, {
    url: '/devices/:id/room',
    summary: 'Web UI form: move a device into a room (`spaceId`), or out of every room (empty).',
    operation: home.moveDevice,
    input: (f, p) => ({ json: { deviceId: p.id, spaceId: text(f, 'spaceId') ?? null } }),
    back: () => '/os/rooms',
    done: (r) => `${(r as Device).name} moved.`,
  });
}
