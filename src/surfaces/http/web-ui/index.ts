import { httpsPage } from './https.js';
import { httpsRedirect } from './https-notice.js';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import type { FastifyPluginAsync } from 'fastify';
import type { Hub } from '../../../hub.js';
import { SESSION_COOKIE } from '../credentials.js';
import { csrfGuard } from '../web/csrf.js';
import { bindPasswordPage } from '../web/password.js';
import { HOME_AREA } from './area.js';
import { addDevicesPage } from './add-devices.js';
import { automationsPage } from './automations.js';
import { clientAssetRoutes } from './client-assets.js';
import { homePage } from './home.js';
import { liveStateRoute } from './live.js';
import { pluginsPage } from './plugins.js';
import { mediaPage } from './media.js';
import { programsPage } from './programs.js';
import { remotesPage } from './remotes.js';
import { roomsPage } from './rooms.js';
import { householdSessionRoutes } from './session.js';
import { settingsPages } from './settings.js';

/**
 * `/os`: the household's web UI. Server-rendered pages whose forms post to routes that run one
 * operation each and send the browser back (they work without JavaScript; small scripts add the
 * live state). Signed in with the App API session cookie; what an account sees and may do is what
 * the operations allow it. State-changing requests signed in by the cookie carry its CSRF token.
 */
export const webUi: FastifyPluginAsync<{ hub: Hub }> = async (app, { hub }) => {
  await app.register(cookie);
  await app.register(formbody);
  app.addHook('onRequest', httpsRedirect(hub));
  app.addHook('preHandler', csrfGuard(SESSION_COOKIE));
  householdSessionRoutes(app, hub);
  bindPasswordPage(app, hub, HOME_AREA);
  clientAssetRoutes(app);
  homePage(app, hub);
  programsPage(app, hub);
  automationsPage(app, hub);
  mediaPage(app, hub);
  remotesPage(app, hub);
  roomsPage(app, hub);
  addDevicesPage(app, hub);
  pluginsPage(app, hub);
  settingsPages(app, hub);
  httpsPage(app, hub);
  liveStateRoute(app, hub);
};
