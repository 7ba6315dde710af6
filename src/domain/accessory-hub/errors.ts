import { defineErrors } from '../../platform/errors.js';

export const accessoryHubErrors = defineErrors({
  ACCESSORY_HUB_OFF: ['unavailable', 'The accessory hub is off (ACCESSORY_HUB=off).'],
  ACCESSORY_HUB_NOT_RUNNING: ['unavailable', 'Homebridge is not running ({state}); try again shortly.'],
  ACCESSORY_HUB_UNREACHABLE: ['upstream_failed', "Homebridge's accessory server did not answer: {reason}"],
  INVALID_ACCESSORY_HUB_SETTINGS: ['invalid', 'Invalid accessory hub settings: {problem}.'],
  INVALID_PLUGIN_NAME: ['invalid', '"{name}" is not a Homebridge plugin name: {problem}.'],
  PLUGIN_NOT_FOUND: ['not_found', 'No plugin {name} is installed or catalogued.'],
  PLUGIN_NOT_IN_REGISTRY: ['not_found', 'The registry has no package {name}{version}.'],
  PLUGIN_INSTALL_FAILED: ['unprocessable', 'Installing {name} failed ({problem}); the accessory hub keeps its previous plugins.'],
  PLUGIN_NOT_FOR_THIS_HOMEBRIDGE: ['unprocessable', '{name}@{version} declares no Homebridge version it works with (its engines: {engines}), and Homebridge {homebridge} loads no plugin without one; it was not installed.'],
  PLUGIN_NOT_INSTALLED: ['conflict', 'Plugin {name} is not installed.'],
  PLUGIN_HAS_NO_CONFIG_SCHEMA: ['not_found', 'Plugin {name} has no config.schema.json.'],
  INVALID_PLUGIN_CONFIG: ['invalid', 'The configuration does not fit the schema of {name}: {problem}.'],
  PLUGIN_CONFIG_SCHEMA_UNUSABLE: ['unprocessable', 'The config.schema.json of {name} is no schema a configuration can be checked against ({problem}); the plugin cannot be configured here until its author fixes it.'],
  REGISTRY_UNREACHABLE: ['upstream_failed', 'The npm registry at {registry} could not be reached: {reason}'],
  ACCESSORY_NOT_FOUND: ['not_found', 'Homebridge serves no accessory {accessoryId} that can be imported.'],
  IMPORTED_DEVICE_NOT_REGISTERED: ['unavailable', 'Accessory {accessoryId} is imported, but its hub device was not registered in time; list the devices again shortly.'],
  IMPORT_COMMAND_NOT_FOUND: ['not_found', 'No pending import command {id} (acknowledged already?).'],
  PLUGIN_OPERATION_BUSY: ['conflict', 'Another plugin install or uninstall is running; try again when it is done.'],
});
