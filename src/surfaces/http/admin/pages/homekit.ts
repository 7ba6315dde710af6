import type { FastifyInstance } from 'fastify';
import type { Hub } from '../../../../hub.js';
import { bindHomeKitForms, homekitSection } from '../../web/homekit-section.js';
import { html } from '../../web/html.js';
import { optionalPart } from '../../web/pages.js';
import { adminForm, bindPage } from '../panel-kit.js';

const BASE = '/admin/panel/homekit';

/** Apple Home through the accessory hub: on or off, the pairing code, the devices shown. */
export function homekitPage(app: FastifyInstance, hub: Hub): void {
  bindPage(app, hub, {
    url: '/panel/homekit',
    title: 'Apple Home',
    summary: "Admin panel: show this hub's devices in Apple Home (Homebridge starts only then, or for a plugin), pair the bridge, choose the devices.",
    async build(ctx) {
      const part = await optionalPart(() => homekitSection(hub, ctx, BASE), (err) => err.kind === 'unavailable');
      return 'problem' in part ? html`<p class="muted">${part.problem}</p>` : part.value;
    },
  });
  // Bound under /admin like the panel's other forms (the area's prefix).
  bindHomeKitForms(hub, (action) => adminForm(app, hub, { ...action, url: action.url.replace(/^\/admin/, '') }), BASE, BASE);
}
