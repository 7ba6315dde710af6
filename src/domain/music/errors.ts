import { defineErrors } from '../../platform/errors.js';

/** Failures of the local media controller (MPD) and the music services. */
export const musicErrors = defineErrors({
  MEDIA_CONTROLLER_OFFLINE: ['unavailable', 'The local media controller is not connected to MPD: {reason}'],
  MEDIA_CONTROLLER_REJECTED: ['unprocessable', 'MPD refused {action}: {mpdMessage}'],
  MEDIA_CONTROLLER_TIMEOUT: ['timeout', 'MPD did not answer {action} in time.'],
  INVALID_CONTROL_PARAMS: ['invalid', 'params of {action}: {problem}'],
  MUSIC_TARGET_NOT_FOUND: ['not_found', 'No music target {id}.'],
  PLAY_ITEMS_REQUIRED: ['invalid', 'Give exactly one of uri and items.'],
  TRANSFER_TO_ITSELF: ['invalid', 'Cannot move playback from {id} to itself.'],
  NOTHING_PLAYING: ['conflict', 'Nothing is playing on {target}.'],
  TARGET_CANNOT_PLAY: ['unprocessable', '{target} cannot play {what}.'],
});
