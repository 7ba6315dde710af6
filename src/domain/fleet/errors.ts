import { defineErrors } from '../../platform/errors.js';

export const fleetErrors = defineErrors({
  FLEET_DEVICE_NOT_FOUND: ['not_found', 'No fleet device {fleetDeviceId}.'],
  BRIDGE_NOT_LINKED: ['unavailable', 'This hub is not linked to the hub of {fleetDeviceId}.'],
  BRIDGE_UNREACHABLE: ['upstream_failed', 'The linked hub at {peerUrl} could not be reached: {reason}'],
  BRIDGE_TIMEOUT: ['timeout', 'The linked hub at {peerUrl} did not answer in time.'],
  BRIDGE_PEER_REFUSED: ['upstream_failed', 'The linked hub refused: {reason}'],
  /** The linked hub's own answers, kept in meaning: its device timed out, is unknown there, refused the command, or its driver is offline. */
  BRIDGE_PEER_TIMEOUT: ['timeout', 'The linked hub answered that the device did not answer in time: {reason}'],
  BRIDGE_PEER_NOT_FOUND: ['not_found', 'The linked hub does not know it: {reason}'],
  BRIDGE_PEER_REJECTED: ['unprocessable', 'The linked hub could not run it: {reason}'],
  BRIDGE_PEER_UNAVAILABLE: ['unavailable', 'The linked hub cannot reach the device now: {reason}'],
  BRIDGE_TOKEN_UNREADABLE: ['unavailable', "The link's token was sealed with another hub's key: save the link again (POST /bridge/link/save with {peerUrl} and the token it issued)."],
  BRIDGE_LINK_INVALID: ['invalid', 'The bridge link cannot be saved: {problem}.'],
  FLEET_STATUS_TRANSITION: ['conflict', 'Release {key} of device {deviceId} is {current}; it cannot become {next} (from {current}: {allowed}).'],
  BRIDGE_TOKEN_NOT_FOUND: ['not_found', 'No bridge token {id}.'],
});
