import { defineErrors } from '../../platform/errors.js';

/** Failures of drivers: connected instances, their answers, and local driver processes. */
export const driverErrors = defineErrors({
  DRIVER_OFFLINE: ['unavailable', 'No instance of driver {driverKey} is connected.'],
  DRIVER_TIMEOUT: ['timeout', 'The driver {driverKey} did not answer {command} within {timeoutMs} ms.'],
  DRIVER_DISCONNECTED: ['upstream_failed', 'The driver {driverKey} disconnected before answering.'],
  /** The driver's own error text, or a default naming the command. */
  DRIVER_ERROR: ['upstream_failed', '{driverMessage}'],
  /** A built-in integration could not reach the device on the network. */
  DEVICE_UNREACHABLE: ['upstream_failed', '{device} could not be reached: {reason}'],
  /** A built-in integration reached the device, which did not answer in time. */
  DEVICE_TIMEOUT: ['timeout', '{device} did not answer {command} in time: {reason}'],
  /** A built-in integration refused the command's parameters, or the device refused the command. */
  COMMAND_REJECTED: ['unprocessable', '{device} refused {command}: {reason}'],
  DRIVER_NOT_FOUND: ['not_found', 'No local driver {driverKey}.'],
  DRIVER_MANIFEST_INVALID: ['conflict', 'The manifest of {driverKey} is invalid: {problem}'],
  INVALID_DRIVER_SETTINGS: ['invalid', 'Invalid settings for {driverKey}: {problem}.'],
  LOCAL_DRIVERS_STOPPED: ['conflict', 'Local drivers are stopped.'],
  DRIVER_PACKAGE_INVALID: ['invalid', 'The driver package is not valid: {problem}.'],
  DRIVER_PACKAGE_TOO_LARGE: ['invalid', 'The driver package is too large: {problem}.'],
  DRIVER_KEY_IN_USE: ['conflict', 'Driver {driverKey} is already installed from {file}, outside the folder an upload manages ({folder}); move or remove it first.'],
  DRIVER_INSTALL_FAILED: ['unprocessable', 'Installing the dependencies of {driverKey} failed ({problem}); the previous version keeps running.'],
  DRIVER_INSTALL_BUSY: ['conflict', 'Another driver package operation is running; try again when it is done.'],
  NO_PREVIOUS_VERSION: ['conflict', 'Driver {driverKey} has no previous version to roll back to.'],
  DRIVER_NOT_REMOVABLE: ['conflict', 'Driver {driverKey} is not in a folder of its own under the drivers folder ({file}); remove it by hand.'],
  DRIVER_TOKEN_NOT_FOUND: ['not_found', 'No driver token {id}.'],
});

/**
 * What the hub tells a driver about the driver's own messages (`DRIVER_STATUS` `error` on its
 * connection); no caller of an operation sees these.
 */
export const driverProtocolErrors = defineErrors({
  INVALID_JSON: ['invalid', 'Every message must be one JSON object in a text frame.'],
  REGISTRATION_TIMEOUT: ['timeout', 'Send driver.register within {timeoutMs} ms of connecting.'],
  INVALID_REGISTRATION: ['invalid', 'Registration refused: {problem}'],
  UNSUPPORTED_PROTOCOL_VERSION: ['unprocessable', 'protocolVersion {version} is not supported; this hub speaks {supported}'],
  UNKNOWN_TYPE: ['invalid', 'unknown message type {type}; expected one of {types}'],
  INVALID_MESSAGE: ['invalid', '{type}: {problem}'],
  /** DRIVER_AUTH=token: the registration carried no token (neither `token` nor a bearer on the upgrade). */
  DRIVER_TOKEN_REQUIRED: ['unauthenticated', 'Registration refused: this hub requires a driver token (DRIVER_AUTH=token); send the token an admin issued for your driverKey as "token" in driver.register or as "Authorization: Bearer <token>" on the upgrade request.'],
  /** DRIVER_AUTH=token: unknown, revoked, or issued for another driverKey (the hub's log says which). */
  DRIVER_TOKEN_INVALID: ['unauthenticated', 'Registration refused: the token is not a valid driver token for driverKey {driverKey} (unknown, revoked, or issued for another driverKey).'],
  /** An admin revoked the token the connection registered with; the connection is closed. */
  DRIVER_TOKEN_REVOKED: ['unauthenticated', 'The driver token this connection registered with was revoked.'],
  /** DRIVER_AUTH=open: another address holds a live connection of the driverKey. */
  DRIVER_KEY_CONNECTED_ELSEWHERE: ['conflict', 'Registration refused: driverKey {driverKey} is connected from another address; it cannot be taken over while that connection lives (with DRIVER_AUTH=token, a driver token may).'],
  /** DRIVER_AUTH=open: the driverKey belongs to a driver the hub runs itself (a local process or a built-in integration). */
  DRIVER_KEY_RESERVED: ['conflict', 'Registration refused: driverKey {driverKey} is run by the hub itself ({transport}); a WebSocket driver cannot take it over (with DRIVER_AUTH=token, a driver token may).'],
});
