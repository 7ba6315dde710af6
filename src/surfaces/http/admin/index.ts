import { httpsRedirect } from '../web-ui/https-notice.js';
import cookie from '@fastify/cookie';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { Hub } from '../../../hub.js';
import type { Operation } from '../../../platform/operations.js';
import { bindOperation, operationIdFor, type RouteBinding } from '../bind-operation.js';
import formbody from '@fastify/formbody';
import multipart from '@fastify/multipart';
import { ADMIN_COOKIE } from '../credentials.js';
import { csrfGuard } from '../web/csrf.js';
import { adminCredential } from './credential.js';
import { systemPage } from './pages/system.js';
import { backupsPage } from './pages/backups.js';
import { driversPage } from './pages/drivers.js';
import { irPage } from './pages/ir.js';
import { logsPage } from './pages/logs.js';
import { matterPage } from './pages/matter.js';
import { homekitPage } from './pages/homekit.js';
import { mqttPage } from './pages/mqtt.js';
import { panelAssets } from './assets.js';
import { usersPage } from './pages/users.js';
import { adminSessionRoutes } from './session.js';
import { bindPasswordPage } from '../web/password.js';
import { ADMIN_AREA, adminForm, bindPage } from './panel-kit.js';

export { adminCredential };

/** A binder for `/admin` routes: tag `admin`, the admin credential. */
export function adminRoutes(app: FastifyInstance, hub: Hub) {
  return (method: RouteBinding<Operation>['method'], url: string, operation: Operation, extra: Partial<RouteBinding<Operation>> = {}) =>
    bindOperation(app, hub.operations, { method, url, operation, credential: adminCredential, tags: ['admin'], operationId: operationIdFor('/admin', operation.name), ...extra });
}

/**
 * `/admin`: the admin panel (server-rendered pages, their forms, its session) and its JSON API.
 * Requests signed in by the panel's cookie must carry the session's CSRF token when they change
 * anything; a bearer header needs none.
 */
export const adminApi: FastifyPluginAsync<{ hub: Hub }> = async (app, { hub }) => {
  // Cookies are parsed only in the families that read one (here, the panel's session): on every
  // other route the plugin's hooks would cost each request for nothing.
  await app.register(cookie);
  await app.register(formbody);
  // Uploads are buffered (bounded per file and in count) so that the CSRF check sees the form's fields before anything runs.
  await app.register(multipart, {
    attachFieldsToBody: true,
    async onFile(part) {
      (part as unknown as { value: Buffer }).value = await part.toBuffer();
    },
    // The larger of the two uploads; each operation holds its own to its own limit.
    limits: { fileSize: Math.max(hub.config.driverUploadMaxBytes, hub.config.backupMaxBytes) + 1, files: 4, fields: 20, fieldSize: 64 * 1024, parts: 24 },
  });
  app.addHook('onRequest', httpsRedirect(hub));
  app.addHook('preHandler', csrfGuard(ADMIN_COOKIE));
  adminSessionRoutes(app, hub);
  bindPasswordPage(app, hub, ADMIN_AREA);
  systemPage(app, hub);
  usersPage(app, hub);
  driversPage(app, hub);
  logsPage(app, hub);
  backupsPage(app, hub);
  irPage(app, hub);
  mqttPage(app, hub);
  matterPage(app, hub);
  homekitPage(app, hub);
  // The integrations' own pages (src/integrations/<name>/admin-page.ts), loaded with the panel.
  for (const { definition } of hub.integrations) if (definition.adminPage) (await definition.adminPage.load()).bindAdminPage({ bindPage, adminForm }, app, hub);
  panelAssets(app);
  const route = adminRoutes(app, hub);
  const { users, invites } = hub.ops;
  route('GET', '/users', users.list);
  route('POST', '/users', users.create, { successStatus: 201 });
  route('GET', '/users/:id', users.get);
  route('POST', '/users/:id', users.update);
  route('POST', '/users/:id/password', users.setPassword);
  route('DELETE', '/users/:id', users.remove);
  route('GET', '/invites', invites.list);
  route('POST', '/invites', invites.create, { successStatus: 201 });
  route('DELETE', '/invites/:id', invites.revoke);
  route('GET', '/users/:id/access', hub.ops.access.get);
  route('POST', '/users/:id/access', hub.ops.access.set);
  route('GET', '/system', hub.ops.system.info);
  route('GET', '/logs', hub.ops.system.logs);
  route('GET', '/audit', hub.ops.audit.list);
  route('GET', '/activity', hub.ops.activity.list);
  route('POST', '/metrics/token', hub.ops.metrics.issueToken, { successStatus: 201 });
  route('POST', '/metrics/token/revoke', hub.ops.metrics.revokeToken);
  const backups = hub.ops.backups;
  route('GET', '/backups', backups.list);
  route('POST', '/backups', backups.create, { successStatus: 201 });
  route('GET', '/backups/:name', backups.get);
  route('DELETE', '/backups/:name', backups.remove);
  route('POST', '/backups/restore', backups.restore, { successStatus: 202 });
  const players = hub.ops.players;
  route('GET', '/players', players.list);
  route('POST', '/players', players.save);
  route('GET', '/players/:id', players.get);
  route('DELETE', '/players/:id', players.remove);
  route('POST', '/players/:id/status', players.reportStatus);
  route('GET', '/users/:id/players', players.getAssignments);
  route('POST', '/users/:id/players', players.setAssignments);
  route('GET', '/remotes', hub.ops.remotes.list);
  const drivers = hub.ops.drivers;
  route('GET', '/drivers', drivers.list);
  route('POST', '/drivers/packages', drivers.install, { successStatus: 201 });
  route('GET', '/drivers/:driverKey/package', drivers.describePackage);
  route('POST', '/drivers/:driverKey/rollback', drivers.rollback);
  route('POST', '/drivers/:driverKey/restart', drivers.restart);
  route('GET', '/drivers/:driverKey/settings', drivers.getSettings);
  route('POST', '/drivers/:driverKey/settings', drivers.updateSettings);
  route('DELETE', '/drivers/:driverKey', drivers.remove);
  const driverTokens = hub.ops.driverTokens;
  route('GET', '/driver-tokens', driverTokens.list);
  route('POST', '/driver-tokens', driverTokens.create, { successStatus: 201 });
  route('DELETE', '/driver-tokens/:id', driverTokens.revoke);
  route('DELETE', '/remotes/:id', hub.ops.remotes.revoke);
};
