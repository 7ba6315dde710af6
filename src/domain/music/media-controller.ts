import { Compile } from 'typebox/compile';
import { Type, type TSchema } from 'typebox';
import type { DomainEventBus } from '../events.js';
import { musicErrors } from './errors.js';
import { CONTROL_ACTIONS, type ControlAction, type LocalPlayerState, type Song } from './model.js';
import { LocalPlayerFailure, type LocalPlayer } from './ports.js';

const none = Type.Object({}, { additionalProperties: false });
const flag = Type.Object({ enabled: Type.Boolean() }, { additionalProperties: false });

/** Each action's params; a typo is a 400, never ignored. */
export const CONTROL_PARAMS: Record<ControlAction, TSchema> = {
  play: none,
  pause: none,
  toggle: none,
  stop: none,
  next: none,
  previous: none,
  clear: none,
  seek: Type.Object({ position: Type.Number({ minimum: 0, maximum: 86_400, description: 'Seconds from the start of the song.' }) }, { additionalProperties: false }),
  volume_set: Type.Object({ volume: Type.Integer({ minimum: 0, maximum: 100 }) }, { additionalProperties: false }),
  volume_step: Type.Object({ delta: Type.Integer({ minimum: -100, maximum: 100, not: { const: 0 } }) }, { additionalProperties: false }),
  random: flag,
  repeat: flag,
  add: Type.Object({ uri: Type.String({ minLength: 1, maxLength: 2000, description: 'A library path (file or directory) or a stream URL.' }) }, { additionalProperties: false }),
  play_index: Type.Object({ index: Type.Integer({ minimum: 0, maximum: 1_000_000, description: 'Queue position.' }) }, { additionalProperties: false }),
};
const checks = Object.fromEntries(CONTROL_ACTIONS.map((a) => [a, Compile(CONTROL_PARAMS[a])])) as Record<ControlAction, ReturnType<typeof Compile>>;

/** A local player failure as the catalogue's: 422 with MPD's words, 503 offline, 504 no answer. */
export function playerFailure(err: unknown, action: string): unknown {
  if (!(err instanceof LocalPlayerFailure)) return err;
  if (err.reason === 'rejected') return musicErrors.MEDIA_CONTROLLER_REJECTED({ action, mpdMessage: err.message }, { details: { action, mpdMessage: err.message } });
  if (err.reason === 'timeout') return musicErrors.MEDIA_CONTROLLER_TIMEOUT({ action }, { details: { action } });
  return musicErrors.MEDIA_CONTROLLER_OFFLINE({ reason: err.message }, { details: { action }, retryAfterSeconds: 5 });
}

/** Runs an action on a player after checking its params; answers the player's state after it. */
export async function controlPlayer(player: LocalPlayer, action: ControlAction, params: Record<string, unknown>): Promise<LocalPlayerState> {
  const check = checks[action];
  if (!check.Check(params)) {
    const first = check.Errors(params)[0];
    throw musicErrors.INVALID_CONTROL_PARAMS({ action, problem: first ? `${first.instancePath || '/'} ${first.message}` : 'invalid' }, { details: { action, params } });
  }
  try {
    await player.control(action, params);
  } catch (err) {
    throw playerFailure(err, action);
  }
  return player.snapshot();
}

/** A player's queue, its failure as the catalogue's. */
export async function queueOf(player: LocalPlayer): Promise<Song[]> {
  try {
    return await player.queue();
  } catch (err) {
    throw playerFailure(err, 'queue');
  }
}

/**
 * The local media controller: the hub box's own player (MPD) as the API shows it. Every change
 * the player reports is published as `media_controller.state_changed`, which the controller's SSE
 * stream forwards.
 */
export class MediaControllerService {
  constructor(
    readonly player: LocalPlayer,
    events: DomainEventBus,
  ) {
    player.onChange((state) => events.emit('media_controller.state_changed', { state, at: state.at }));
  }

  state(): LocalPlayerState {
    return this.player.snapshot();
  }

  async control(action: ControlAction, params: Record<string, unknown>): Promise<LocalPlayerState> {
    return controlPlayer(this.player, action, params);
  }
}
