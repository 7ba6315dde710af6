import { defineErrors } from '../../platform/errors.js';

/**
 * Failures of the media family. A command a player lacks is the devices' COMMAND_NOT_SUPPORTED
 * (422, `details.supported` lists what it has); a device that cannot be reached or answers late is
 * the drivers' DEVICE_UNREACHABLE (502) and DEVICE_TIMEOUT (504).
 */
export const mediaErrors = defineErrors({
  MEDIA_PLAYER_NOT_FOUND: ['not_found', 'No media player {id}.'],
  ENDPOINT_NOT_FOUND: ['not_found', 'No media endpoint {id}.'],
  DISCOVERY_FAILED: ['unavailable', 'Endpoint discovery could not run: {reason}'],
  ENDPOINT_PROBE_FAILED: ['upstream_failed', 'No {kind} endpoint answered at {host}:{port}: {reason}'],
  ENDPOINT_KIND_NOT_PROBED: ['invalid', 'A {kind} endpoint cannot be added by address; it is found by discovery or registered.'],
  CAST_PAIRING_NOT_STARTED: ['conflict', 'No cast pairing is in progress; start one with /media-services/endpoints/cast/pair/start.'],
  CAST_PAIRING_IN_PROGRESS: ['conflict', 'A cast pairing with {endpointId} is in progress; finish it or wait until it expires.'],
  CAST_PAIRING_CODE_WRONG: ['unprocessable', 'The code does not match the one {endpointId} shows.'],
  CAST_PAIRING_TIMEOUT: ['timeout', '{endpointId} did not answer the pairing in time.'],
  CAST_PAIRING_FAILED: ['upstream_failed', 'Pairing with {endpointId} failed: {reason}'],
  ENDPOINT_NOT_PAIRABLE: ['unprocessable', 'Endpoint {id} is a {kind} endpoint; only Android TV (Remote v2) endpoints pair.'],
  BRIDGE_CALLBACK_INVALID: ['invalid', 'callbackUrl {url} is not an http(s) URL.'],
});
