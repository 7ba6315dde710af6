import type { FastifyInstance } from 'fastify';
import type { Hub } from '../../../hub.js';
import { INTEGRATIONS } from '../../../integrations/index.js';
import { ADMIN_COOKIE } from '../credentials.js';
import type { FormAction } from '../web/forms.js';
import { bindSecretForm, type SecretFormAction } from '../web/secret-page.js';
import { bindAreaForm, bindPage as bindAreaPage, type PageRoute, type WebArea } from '../web/pages.js';
import { adminCredential } from './credential.js';

export type { PageContext } from '../web/pages.js';

/** The admin panel as a web area: admin accounts, its own cookie, its sections. */
export const ADMIN_AREA: WebArea = {
  name: 'Admin',
  tag: 'admin',
  credential: adminCredential,
  cookie: ADMIN_COOKIE,
  signInUrl: '/admin/login',
  signOutUrl: '/admin/logout',
  passwordUrl: '/admin/password',
  nav: [
    { href: '/admin/', label: 'System' },
    { href: '/admin/panel/users', label: 'Users' },
    { href: '/admin/panel/drivers', label: 'Drivers' },
    { href: '/admin/panel/ir', label: 'IR devices' },
    { href: '/admin/panel/logs', label: 'Logs' },
    { href: '/admin/panel/backups', label: 'Backups' },
    { href: '/admin/panel/mqtt', label: 'MQTT' },
    { href: '/admin/panel/matter', label: 'Matter' },
    { href: '/admin/panel/homekit', label: 'Apple Home' },
    // An integration's page, where it declares one (src/integrations).
    ...INTEGRATIONS.flatMap((i) => (i.adminPage ? [{ href: `/admin${i.adminPage.url}`, label: i.adminPage.label }] : [])),
  ],
};

/** An admin panel page. */
export function bindPage(app: FastifyInstance, hub: Hub, route: PageRoute): void {
  bindAreaPage(app, hub, ADMIN_AREA, route);
}

/** A form of the admin panel (tag `admin`, the admin credential). */
export function adminForm(app: FastifyInstance, hub: Hub, action: FormAction): void {
  bindAreaForm(app, hub, ADMIN_AREA, action);
}

/** A form of the admin panel that creates a secret: its answer is the page that shows it once (never a URL). */
export function adminSecretForm(app: FastifyInstance, hub: Hub, action: SecretFormAction): void {
  bindSecretForm(app, hub, ADMIN_AREA, action);
}
