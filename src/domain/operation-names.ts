import type { accessModule } from './access/module.js';
import type { authModule } from './auth/module.js';
import type { devicesModule } from './devices/module.js';
import type { driversModule } from './drivers/module.js';
import type { graphModule } from './graph/module.js';
import type { homeModule } from './home/module.js';
import type { intentsModule } from './intents/module.js';
import type { irModule } from './ir/module.js';
import type { mediaModule } from './media/module.js';
import type { musicModule } from './music/module.js';
import type { playersModule } from './players/module.js';
import type { programCatalogModule, programsModule } from './programs/module.js';
import type { protocolModule } from './protocol/module.js';
import type { remotesModule } from './remotes/module.js';
import type { scenesModule } from './scenes/module.js';
import type { stateModule } from './state/module.js';
import type { systemModule } from './system/module.js';

/** The operation names one module offers, from the `name` literal of each of its operations. */
type NamesOf<M extends (...args: never[]) => { operations: object }> = {
  [G in keyof ReturnType<M>['operations']]: {
    [K in keyof ReturnType<M>['operations'][G]]: ReturnType<M>['operations'][G][K] extends { readonly name: infer N extends string } ? N : never;
  }[keyof ReturnType<M>['operations'][G]];
}[keyof ReturnType<M>['operations']];

/**
 * Every operation name the hub's modules offer. Tables that refer to operations by name (the
 * hub protocol's commands) are checked against it, so a misspelt name fails the type check.
 */
export type OperationName =
  | NamesOf<typeof accessModule>
  | NamesOf<typeof authModule>
  | NamesOf<typeof devicesModule>
  | NamesOf<typeof driversModule>
  | NamesOf<typeof graphModule>
  | NamesOf<typeof homeModule>
  | NamesOf<typeof intentsModule>
  | NamesOf<typeof irModule>
  | NamesOf<typeof mediaModule>
  | NamesOf<typeof musicModule>
  | NamesOf<typeof playersModule>
  | NamesOf<typeof programCatalogModule>
  | NamesOf<typeof programsModule>
  | NamesOf<typeof protocolModule>
  | NamesOf<typeof remotesModule>
  | NamesOf<typeof scenesModule>
  | NamesOf<typeof stateModule>
  | NamesOf<typeof systemModule>;
