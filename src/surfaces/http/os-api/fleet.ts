import cookie from '@fastify/cookie';
import type { FastifyPluginAsync } from 'fastify';
import { requestCredential, SESSION_COOKIE } from '../credentials.js';
import { csrfGuard } from '../web/csrf.js';
import { osRoutes, type OsApiOptions } from './options.js';

/** `osBridgeAuth`: the bridge token a linked hub presents as its bearer. */
export const bridgeCredential = requestCredential({ admits: ['bridge'] });
/** `appAuth`: the App API's session cookie or token (any account). */
export const appAuthCredential = requestCredential({ admits: ['app', 'os_api_admin'], cookie: true });

/**
 * Fleet and bridge (docs/fleet.md). Each route takes exactly the credential the spec gives it:
 * `osApiAuth` (an admin's OS API bearer), `osBridgeAuth` (a bridge token) or `appAuth` (the App
 * API session or token); the registry refuses the others (401, or 403 INSUFFICIENT_SCOPE).
 */
export const fleetRoutes: FastifyPluginAsync<OsApiOptions> = async (app, { hub, base }) => {
  const { fleet } = hub.ops;
  const admin = osRoutes(app, hub, base, ['fleet']);
  admin('GET', '/home-fleet-devices', fleet.devices);
  admin('POST', '/home-fleet-devices/releases/:key/status', fleet.setReleaseStatus);
  admin('GET', '/bridge/link', fleet.link);
  admin('POST', '/bridge/link/save', fleet.saveLink);
  admin('POST', '/bridge/token', fleet.issueToken, { successStatus: 201 });
  admin('POST', '/bridge/token/revoke', fleet.revokeToken);

  const peer = osRoutes(app, hub, base, ['bridge']);
  const asPeer = { credential: bridgeCredential };
  peer('GET', '/bridge/health', fleet.health, asPeer);
  peer('GET', '/bridge/capabilities', fleet.capabilities, asPeer);
  peer('GET', '/bridge/devices', fleet.bridgeDevices, asPeer);
  peer('GET', '/bridge/devices/state', fleet.bridgeStates, asPeer);
  peer('POST', '/bridge/devices/register', fleet.register, asPeer);
  peer('POST', '/bridge/devices/update', fleet.update, asPeer);
  peer('POST', '/bridge/devices/:fleetDeviceId/command', fleet.bridgeCommand, asPeer);

  // The App API session is a cookie: changes signed in by it carry its CSRF token.
  await app.register(async (scoped) => {
    await scoped.register(cookie);
    scoped.addHook('preHandler', csrfGuard(SESSION_COOKIE));
    const household = osRoutes(scoped, hub, base, ['fleet']);
    household('POST', '/device/home/category', fleet.setCategory, { credential: appAuthCredential });
    household('POST', '/integration/home/device/command', fleet.command, { credential: appAuthCredential });
  });
};
