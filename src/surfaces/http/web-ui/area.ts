import { plainHttpNotice } from './https-notice.js';
import { requestCredential, SESSION_COOKIE } from '../credentials.js';
import type { WebArea } from '../web/pages.js';

/** The household's session: the App API cookie (a bearer header works too, for scripts). */
export const householdCredential = requestCredential({ admits: ['os_api_admin', 'app'], cookie: true });

/** The household web UI as a web area: any account, the App API session, its sections. */
export const HOME_AREA: WebArea = {
  name: 'Home',
  tag: 'web-ui',
  credential: householdCredential,
  cookie: SESSION_COOKIE,
  signInUrl: '/os/login',
  signOutUrl: '/os/logout',
  passwordUrl: '/os/password',
  manifest: '/os/manifest.webmanifest',
  notice: (request, hub) => plainHttpNotice(request, hub.https.service.status()),
  adminNav: [
    { href: '/os/automations', label: 'Automations' },
    { href: '/os/add', label: 'Add devices' },
    { href: '/os/plugins', label: 'Plugins' },
    { href: '/admin/', label: 'Admin' },
  ],
  nav: [
    { href: '/os/', label: 'Home' },
    { href: '/os/programs', label: 'Programs' },
    { href: '/os/media', label: 'Zones and media' },
    { href: '/os/remotes', label: 'Remotes' },
    { href: '/os/rooms', label: 'Rooms' },
    { href: '/os/settings', label: 'Home settings' },
    { href: '/os/https', label: 'Secure connection' },
  ],
};
