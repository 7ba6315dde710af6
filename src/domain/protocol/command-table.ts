/**
 * The hub protocol's command names and the operation each one runs. A command is only a name
 * for an operation of the registry: the same operation answers its REST route, if it has one.
 * src/hub.ts checks each name against the operations its modules offer, so a misspelt one fails `tsc`.
 */
export const HUB_COMMANDS = {
  GET_PROTOCOL_CAPABILITIES: 'protocol.capabilities',
  LIST_EVENTS: 'protocol.events',
  SYSTEM_SNAPSHOT: 'system.snapshot',
  GET_CONTEXT_SNAPSHOT: 'graph.context',
  GET_HOME_GRAPH: 'graph.get',
  LIST_CAPABILITY_MODEL: 'capabilities.model',
  LIST_INTEGRATIONS: 'integrations.list',
  LIST_CONNECTIONS: 'drivers.connections',
  LIST_SCENES: 'scenes.list',
  SCENE_RUN: 'scenes.run',
  LIST_ENTITY_DOMAINS: 'entities.domains',
  LIST_ENTITIES: 'entities.list',
  GET_ENTITY: 'entities.get',
  ENTITY_ACTION: 'entities.action',
  LIST_SENSORS: 'entities.sensors',
  LIST_STATES: 'state.list',
  GET_DEVICE_STATE: 'state.get',
  LIST_PROGRAMS: 'programs.list',
  LIST_AUTOMATIONS: 'automations.list',
  LIST_ACTION_MAPS: 'action_maps.list',
  LIST_ZONES: 'zones.list',
  PROGRAM_RUN: 'programs.run',
  AUTOMATION_RUN: 'automations.run',
  ACTION_MAP_TRIGGER: 'action_maps.trigger',
  LIST_PROGRAM_SEMANTICS: 'program_semantics.list',
  UPSERT_PROGRAM_SEMANTIC: 'program_semantics.upsert',
  DELETE_PROGRAM_SEMANTIC: 'program_semantics.delete',
  LIST_DRIVERS: 'drivers.list',
  LIST_DEVICES: 'devices.list',
  LIST_DEVICE_COMMANDS: 'devices.commands',
  GET_DEVICE_COMMAND: 'devices.commands.get',
  EXECUTE_DEVICE_COMMAND: 'devices.command',
  DEVICE_ACTION: 'devices.action',
  DRIVER_MESSAGE: 'drivers.message',
  INTENT_PARSE: 'intents.parse',
  INTENT_EXECUTE: 'intents.execute',
} as const satisfies Record<string, string>;

export type HubCommandName = keyof typeof HUB_COMMANDS;
