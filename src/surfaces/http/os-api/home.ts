import type { FastifyPluginAsync } from 'fastify';
import { osRoutes, type OsApiOptions } from './options.js';

export const homeRoutes: FastifyPluginAsync<OsApiOptions> = async (app, { hub, base }) => {
  const ops = hub.ops.home;

  const spaces = osRoutes(app, hub, base, ['spaces']);
  spaces('GET', '/spaces', ops.listSpaces);
  spaces('GET', '/spaces/overview', ops.overview);
  spaces('POST', '/spaces/save', ops.saveSpace);
  spaces('POST', '/spaces/:id/remove', ops.removeSpace);
  spaces('GET', '/spaces/:id', ops.getSpace);
  spaces('GET', '/spaces/:id/devices', ops.spaceDevices);
  spaces('POST', '/spaces/:id/devices/assign', ops.assignDevices);
  spaces('POST', '/spaces/devices/move', ops.moveDevice);
  spaces('GET', '/spaces/:id/remote-sources', ops.remoteSources);
  spaces('POST', '/spaces/:id/remote-sources/:sourceId/activate', ops.activateSource);

  const zones = osRoutes(app, hub, base, ['zones']);
  zones('GET', '/zones', ops.listZones);
  zones('POST', '/zones/save', ops.saveZone);
  zones('POST', '/zones/:id/remove', ops.removeZone);
  zones('POST', '/zones/:id/volume', ops.zoneVolume);
  zones('POST', '/zones/:id/program/run', ops.runZoneProgram, { queryFields: ['wait'] });
  zones('GET', '/zone-groups', ops.listZoneGroups);
  zones('POST', '/zone-groups/save', ops.saveZoneGroup);
  zones('POST', '/zone-groups/:id/remove', ops.removeZoneGroup);
  zones('POST', '/zone-groups/:id/zones/assign', ops.assignZones);

  const macros = osRoutes(app, hub, base, ['macros']);
  macros('GET', '/macros', ops.listMacros);
  macros('POST', '/macros/save', ops.saveMacro);
  macros('POST', '/macros/:id/remove', ops.removeMacro);
  macros('GET', '/macros/:id', ops.getMacro);
  macros('POST', '/macros/:id/run', ops.runMacro);
  macros('GET', '/action-maps', ops.listActionMaps);
  macros('POST', '/action-maps/save', ops.saveActionMap);
  macros('POST', '/action-maps/:id/remove', ops.removeActionMap);
  macros('POST', '/action-maps/:id/trigger', ops.triggerActionMap);
  macros('GET', '/activity-presets', ops.listPresets);
  macros('POST', '/activity-presets/:id/run', ops.runPreset, { queryFields: ['wait'] });

  const alerts = osRoutes(app, hub, base, ['alerts']);
  alerts('GET', '/alerts/submissions', ops.listAlerts);
  alerts('POST', '/alerts/submissions', ops.submitAlert, { successStatus: 201 });

  const settings = osRoutes(app, hub, base, ['home']);
  settings('GET', '/home/settings', ops.getSettings);
  settings('POST', '/home/settings', ops.updateSettings);

  const prefs = osRoutes(app, hub, base, ['preferences']);
  prefs('GET', '/preferences/home', ops.getPreferences);
  prefs('POST', '/preferences/home', ops.updatePreferences);
  prefs('GET', '/preferences/home/favorites', ops.getFavorites);
  prefs('POST', '/preferences/home/favorites', ops.saveFavorites);

  const design = osRoutes(app, hub, base, ['design']);
  design('GET', '/design-profiles', ops.listDesignProfiles);
  design('POST', '/design-profiles/select', ops.selectDesignProfile);
  design('GET', '/design/live', ops.liveDesign);
};
