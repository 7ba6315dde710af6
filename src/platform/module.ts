import type { Operation } from './operations.js';

/** Operations a module offers, by group: `hub.ops.<group>.<key>`. */
export type OperationGroups = Readonly<Record<string, Readonly<Record<string, Operation>>>>;

/** What a module that offers no operations declares (an empty group list, which merges with the others as nothing). */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- the empty list of groups: `{}` intersects to nothing, `Record<string, never>` to never
export type NoOperations = {};

/**
 * A part of the hub with a lifecycle, after Zigbee2MQTT's controller and extensions: a module is
 * built from what it needs (typed constructor arguments, never looked up), offers operations,
 * and is started and stopped by the hub in dependency order. Its name is also the readiness part
 * it completes (`/readyz` waits for every module).
 */
export interface HubModule<G extends OperationGroups = OperationGroups> {
  readonly name: string;
  /** Modules that start before this one, and stop after it. */
  readonly needs: readonly string[];
  readonly operations: G;
  /** Loads what it holds and starts its timers; the hub calls it once, after `needs` started. */
  start?(): Promise<void>;
  /** Releases what it holds. Called even when `start` did not run or failed, so it must cope. */
  stop?(): Promise<void>;
}

/** Declares a module; what else it returns (its services) stays typed for the modules that need them. */
export function defineModule<M extends HubModule>(module: M): M {
  return module;
}

/**
 * The modules in an order where each comes after everything it needs, keeping the given order
 * where it does not matter. Throws on a duplicate or unknown name and on a dependency cycle.
 */
export function inDependencyOrder<M extends HubModule>(modules: readonly M[]): M[] {
  const byName = new Map<string, M>();
  for (const module of modules) {
    if (byName.has(module.name)) throw new Error(`module ${module.name} is defined twice`);
    byName.set(module.name, module);
  }
  for (const module of modules) {
    const unknown = module.needs.filter((name) => !byName.has(name));
    if (unknown.length > 0) throw new Error(`module ${module.name} needs ${unknown.join(', ')}, which no module provides`);
  }
  const ordered: M[] = [];
  const placed = new Set<string>();
  const visiting: string[] = [];
  const place = (module: M) => {
    if (placed.has(module.name)) return;
    if (visiting.includes(module.name)) throw new Error(`modules need each other: ${[...visiting.slice(visiting.indexOf(module.name)), module.name].join(' → ')}`);
    visiting.push(module.name);
    for (const name of module.needs) place(byName.get(name)!);
    visiting.pop();
    placed.add(module.name);
    ordered.push(module);
  };
  for (const module of modules) place(module);
  return ordered;
}

/** The logger a module writes to (pino's, bound to the module as `component`). */
export interface ModuleLog {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: unknown, msg: string): void;
}

/** One union member per element of `U`, turned into their intersection (`A | B` → `A & B`). */
type Intersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;

/**
 * The operation groups of a list of modules, as `hub.ops` offers them: two modules that offer a
 * group of the same name (the home's `home` and the programs' activity presets) share it.
 */
export type OperationsOf<Ms extends readonly HubModule[]> = Intersection<Ms[number]['operations']>;

/** The operation names in a module's groups, from the `name` literal of each operation. */
type NamesInGroups<G> = {
  [K in keyof G]: { [O in keyof G[K]]: G[K][O] extends { readonly name: infer N extends string } ? N : never }[keyof G[K]];
}[keyof G];

/** Every operation name a list of modules offers (each module on its own: `M` distributes). */
export type OperationNamesOf<Ms extends readonly HubModule[]> = Ms[number] extends infer M ? (M extends HubModule ? NamesInGroups<M['operations']> : never) : never;

/**
 * `hub.ops`: every module's operation groups in one object, groups of the same name merged. Two
 * modules offering the same key in one group is a wiring mistake, and throws.
 */
export function collectOperations<const Ms extends readonly HubModule[]>(modules: Ms): OperationsOf<Ms> {
  const groups: Record<string, Record<string, Operation>> = {};
  for (const module of modules) {
    for (const [group, operations] of Object.entries(module.operations)) {
      const into = (groups[group] ??= {});
      for (const [key, operation] of Object.entries(operations)) {
        if (key in into) throw new Error(`hub.ops.${group}.${key} is offered twice (by ${module.name} and another module)`);
        into[key] = operation;
      }
    }
  }
  return groups as OperationsOf<Ms>;
}
