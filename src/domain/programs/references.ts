/**
 * What a program refers to (devices, programs, macros, zones) and whether running it would run
 * itself again (a cycle through run_program steps and macros that run programs).
 */
import type { RoutineDevices } from '../home/ports.js';
import type { Condition, Trigger } from './automation-model.js';
import type { Program, Step } from './model.js';
import { nestedStepLists } from './steps.js';

export interface References {
  /** Commanded devices, devices whose state conditions read, and devices triggers watch. */
  devices: Set<string>;
  programs: Set<string>;
  macros: Set<string>;
  zones: Set<string>;
  scenes: Set<string>;
}

/** Walks every step, nested ones included, in order (containers before their contents). */
export function forEachStep(steps: readonly Step[], visit: (step: Step) => void): void {
  for (const step of steps) {
    visit(step);
    for (const nested of nestedStepLists(step)) forEachStep(nested.steps, visit);
  }
}

function triggerReferences(triggers: readonly Trigger[], refs: References): void {
  for (const t of triggers) {
    if (t.type === 'state' || t.type === 'numeric' || t.type === 'availability' || t.type === 'button') for (const d of t.deviceIds) refs.devices.add(d);
    if (t.type === 'hub' && t.programId) refs.programs.add(t.programId);
  }
}

function conditionReferences(conditions: readonly Condition[], refs: References): void {
  for (const c of conditions) {
    if (c.type === 'and' || c.type === 'or' || c.type === 'not') conditionReferences(c.conditions, refs);
    else if (c.type === 'state' || c.type === 'numeric') refs.devices.add(c.deviceId);
  }
}

/**
 * Everything the steps refer to, nested steps included. Given a program, both its on path
 * (`steps`) and its off path (`offSteps`).
 */
export function referencesOf(source: readonly Step[] | Pick<Program, 'steps' | 'offSteps' | 'triggers' | 'conditions'>): References {
  const refs: References = { devices: new Set(), programs: new Set(), macros: new Set(), zones: new Set(), scenes: new Set() };
  const lists: ReadonlyArray<readonly Step[]> = isStepList(source) ? [source] : [source.steps, source.offSteps ?? []];
  if (!isStepList(source)) {
    triggerReferences(source.triggers ?? [], refs);
    conditionReferences(source.conditions ?? [], refs);
  }
  for (const list of lists) {
    forEachStep(list, (step) => {
      switch (step.type) {
        case 'command':
          refs.devices.add(step.deviceId);
          break;
        case 'wait_until':
        case 'condition':
          refs.devices.add(step.condition.deviceId);
          break;
        case 'run_program':
          refs.programs.add(step.programId);
          break;
        case 'run_macro':
          refs.macros.add(step.macroId);
          break;
        case 'zone_volume':
          refs.zones.add(step.zoneId);
          break;
        case 'scene':
          refs.scenes.add(step.sceneId);
          // A scene is its device's: the catalog lists it only once the device said so.
          refs.devices.add(step.sceneId.slice(0, Math.max(0, step.sceneId.indexOf(':'))) || step.sceneId);
          break;
        case 'alert':
          if (step.deviceId) refs.devices.add(step.deviceId);
          break;
        case 'choose':
          for (const choice of step.choices) conditionReferences(choice.conditions, refs);
          break;
        case 'repeat':
          conditionReferences([...(step.while ?? []), ...(step.until ?? [])], refs);
          break;
        case 'wait_for_trigger':
          triggerReferences(step.triggers, refs);
          break;
        default:
          break;
      }
    });
  }
  return refs;
}

function isStepList(source: readonly Step[] | Pick<Program, 'steps' | 'offSteps' | 'triggers' | 'conditions'>): source is readonly Step[] {
  return Array.isArray(source);
}

/** Prefix of macro nodes in a cycle path, e.g. `['a', 'macro:m1', 'a']`. */
export const MACRO_PREFIX = 'macro:';

/**
 * A cycle reachable from `startProgramId`, as the path that closes it, or undefined.
 *
 * Edges: program → the programs its steps run (both paths, nested steps included) and the macros
 * they run; macro → the programs `getMacroPrograms` names. Programs appear by id, macros as
 * `macro:<id>`: `['a', 'b', 'a']`, `['a', 'macro:m', 'a']`. A cycle that does not pass through the
 * start but is reachable from it is reported too (`['b', 'c', 'b']`): running the start would run
 * forever all the same. Unknown programs (`getProgramSteps` → undefined) are leaves.
 *
 * When checking a program being saved, let `getProgramSteps(startProgramId)` answer the NEW steps
 * (on and off paths concatenated, if the off path counts).
 */
export function findCycle(
  startProgramId: string,
  getProgramSteps: (programId: string) => Step[] | undefined,
  getMacroPrograms: (macroId: string) => string[],
): string[] | undefined {
  type NodeKey = string; // "p:<id>" or "m:<id>"
  const label = (key: NodeKey) => (key.startsWith('m:') ? MACRO_PREFIX + key.slice(2) : key.slice(2));
  const successors = (key: NodeKey): NodeKey[] => {
    if (key.startsWith('m:')) return [...new Set(getMacroPrograms(key.slice(2)))].map((p) => `p:${p}`);
    const steps = getProgramSteps(key.slice(2));
    if (!steps) return [];
    const refs = referencesOf(steps);
    return [...[...refs.programs].map((p) => `p:${p}`), ...[...refs.macros].map((m) => `m:${m}`)];
  };

  // Iterative depth-first search; "active" nodes are on the current path, "done" nodes were fully
  // explored without finding a cycle (so a diamond is explored once and is not a cycle).
  const done = new Set<NodeKey>();
  const active = new Map<NodeKey, number>(); // node → index in `path`
  const path: NodeKey[] = [];
  const stack: Array<{ key: NodeKey; next: NodeKey[]; i: number }> = [];
  const enter = (key: NodeKey) => {
    active.set(key, path.length);
    path.push(key);
    stack.push({ key, next: successors(key), i: 0 });
  };
  enter(`p:${startProgramId}`);
  while (stack.length) {
    const frame = stack[stack.length - 1] as { key: NodeKey; next: NodeKey[]; i: number };
    const next = frame.next[frame.i++];
    if (next === undefined) {
      stack.pop();
      path.pop();
      active.delete(frame.key);
      done.add(frame.key);
      continue;
    }
    const at = active.get(next);
    if (at !== undefined) return [...path.slice(at), next].map(label);
    if (!done.has(next)) enter(next);
  }
  return undefined;
}

/** Devices commanded by the steps (nested included) for which `isLighting` holds, in first-use order. */
export function lightingDevices(steps: readonly Step[], isLighting: (deviceId: string) => boolean): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  forEachStep(steps, (step) => {
    if (step.type !== 'command' || seen.has(step.deviceId)) return;
    seen.add(step.deviceId);
    if (isLighting(step.deviceId)) out.push(step.deviceId);
  });
  return out;
}

/** What `devicesReachedBy` reads: programs' steps, and the home's macros' and zones' devices. */
export interface RoutineWorld extends RoutineDevices {
  program(id: string): Pick<Program, 'steps' | 'offSteps'> | undefined;
}

/**
 * Every device a program reaches, through the programs and macros it runs and the zones it sets,
 * transitively (each program visited once, so cycles end). `unresolved` tells whether a reference
 * named something that no longer exists.
 */
export function devicesReachedBy(programId: string, world: RoutineWorld): { devices: Set<string>; unresolved: boolean } {
  const devices = new Set<string>();
  let unresolved = false;
  const seen = new Set<string>();
  const pending = [programId];
  while (pending.length > 0) {
    const id = pending.pop()!;
    if (seen.has(id)) continue;
    seen.add(id);
    const program = world.program(id);
    if (!program) {
      unresolved = true;
      continue;
    }
    const refs = referencesOf(program);
    for (const deviceId of refs.devices) devices.add(deviceId);
    for (const next of refs.programs) pending.push(next);
    for (const [ids, lookup] of [[refs.macros, world.macroDevices], [refs.zones, world.zoneDevices]] as const) {
      for (const id of ids) {
        const reached = lookup(id);
        if (reached) for (const deviceId of reached) devices.add(deviceId);
        else unresolved = true;
      }
    }
  }
  return { devices, unresolved };
}

/** The steps that run whatever the conditions say: the top level and parallel branches, with their paths. */
function unconditionalSteps(steps: readonly Step[], path: string, visit: (step: Step, path: string) => void): void {
  steps.forEach((step, i) => {
    visit(step, `${path}[${i}]`);
    if (step.type === 'parallel') step.branches.forEach((b, k) => unconditionalSteps(b, `${path}[${i}].branches[${k}]`, visit));
  });
}

const readsTrigger = (value: unknown): boolean => JSON.stringify(value ?? null).includes('trigger');

/**
 * A loop an automation would make through its own actions, where it can be seen at save:
 * it starts when its own run ends, or a trigger on every change of a device's field meets an
 * unconditional command to that device that changes the field each time (a toggle of `on`, a
 * value computed from the trigger). Loops that cannot be seen are paused at run time.
 */
export function findAutomationLoop(programId: string, program: Pick<Program, 'steps' | 'triggers' | 'conditions'>): { path: string; why: string } | undefined {
  const triggers = program.triggers ?? [];
  for (const [i, t] of triggers.entries()) {
    if (t.type === 'hub' && t.programId === programId) return { path: `triggers[${i}].programId`, why: 'it starts when its own run ends' };
  }
  if ((program.conditions ?? []).length > 0) return undefined;
  for (const [i, t] of triggers.entries()) {
    if (t.type !== 'state' || t.from !== undefined || t.to !== undefined || t.forMs) continue;
    let found: { path: string; why: string } | undefined;
    unconditionalSteps(program.steps, 'steps', (step, path) => {
      if (found || step.type !== 'command' || !t.deviceIds.includes(step.deviceId)) return;
      const toggles = t.field === 'on' && (step.command === 'toggle' || step.command === 'power_toggle');
      if (toggles || readsTrigger(step.params)) {
        found = { path, why: `triggers[${i}] fires on every change of ${step.deviceId} ${t.field}, and ${path} changes it again (${step.command}); give the trigger a "to" or "from", a condition, or a "for"` };
      }
    });
    if (found) return found;
  }
  return undefined;
}
