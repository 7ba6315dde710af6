import { defineErrors } from '../../platform/errors.js';

/** Failures of devices, their commands, capabilities and abstract actions. */
export const deviceErrors = defineErrors({
  DEVICE_NOT_FOUND: ['not_found', 'No device {id}.'],
  COMMAND_NOT_FOUND: ['not_found', 'Device {device} has no command {command}.'],
  COMMAND_NOT_SUPPORTED: ['unprocessable', 'Device {device} has no {what}.'],
  CAPABILITY_NOT_SUPPORTED: ['unprocessable', 'Device {device} does not support {capability}.'],
  ACTION_VALUE_REQUIRED: ['invalid', '{action} needs a value.'],
  ACTION_NOT_SUPPORTED: ['unprocessable', 'Device {device} cannot {action}.'],
  COMMAND_NOT_IN_CLASS: ['unprocessable', '{command} is not a command of device {device} (a {deviceClass}).'],
  INVALID_COMMAND_PARAMS: ['invalid', 'params of {command}: {problem}'],
  INVALID_ACTION_VALUE: ['invalid', '{action} needs a finite numeric value.'],
  EQUALIZER_FORMS_MIXED: ['invalid', 'Send either {command, params?} or bands, soundMode and preset, not both.'],
  INVALID_DRIVER_RESULT: ['upstream_failed', "The driver's answer to {command} is not usable: {problem}."],
  NOT_AN_IR_DEVICE: ['unprocessable', 'Device {id} is not a GENERIC_IR device.'],
  IR_DEVICE_MISCONFIGURED: ['unprocessable', 'Device {device} has no extenderIp.'],
});
