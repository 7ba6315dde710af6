import type { FastifyPluginAsync } from 'fastify';
import { osRoutes, type OsApiOptions } from './options.js';

/** The accessory hub (docs/accessory-hub.md): the managed Homebridge, its plugins and accessories. */
export const accessoryHubRoutes: FastifyPluginAsync<OsApiOptions> = async (app, { hub, base }) => {
  const ops = hub.ops.accessoryHub;
  const route = osRoutes(app, hub, base, ['accessory-hub']);
  route('GET', '/accessory-hub/status', ops.status);
  route('POST', '/accessory-hub/resync', ops.resync);
  route('POST', '/accessory-hub/settings', ops.settings);
  route('GET', '/accessory-hub/accessories', ops.accessories);
  route('GET', '/accessory-hub/import-accessories', ops.importable);
  route('POST', '/accessory-hub/import-accessories/resync', ops.resyncImportable);
  route('POST', '/accessory-hub/import-accessories/:accessoryId/import', ops.importAccessory);
  route('POST', '/accessory-hub/import-accessories/:accessoryId/remove', ops.removeImport);
  route('GET', '/accessory-hub/plugins', ops.list);
  route('GET', '/accessory-hub/plugins/search', ops.search);
  route('GET', '/accessory-hub/plugins/resolve', ops.resolve);
  route('POST', '/accessory-hub/plugins/custom', ops.addCustom);
  route('GET', '/accessory-hub/plugins/:pluginId', ops.get);
  route('GET', '/accessory-hub/plugins/:pluginId/config-schema', ops.configSchema);
  route('POST', '/accessory-hub/plugins/:pluginId/catalog-remove', ops.removeCustom);
  route('POST', '/accessory-hub/plugins/:pluginId/install', ops.install);
  route('POST', '/accessory-hub/plugins/:pluginId/uninstall', ops.uninstall);
  route('POST', '/accessory-hub/plugins/:pluginId/enable', ops.enable);
  route('POST', '/accessory-hub/plugins/:pluginId/disable', ops.disable);
  // The body is the plugin's configuration as a whole (validated against its own schema).
  route('POST', '/accessory-hub/plugins/:pluginId/config', ops.configure);
};
