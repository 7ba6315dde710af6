/**
 * The device model's vocabulary in one import: the capability table, command synonyms and command
 * reading, the class vocabulary, the derivation of a device's capabilities, class and attributes,
 * and its entity domains. Each lives in its own module; importers use this one.
 */
export * from './capability-table.js';
export * from './command-synonyms.js';
export * from './device-classes.js';
export * from './derivation.js';
export * from './entity-domains.js';
