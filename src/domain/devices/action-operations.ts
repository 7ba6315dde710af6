import { Type } from 'typebox';
import { failureOf } from '../../platform/errors.js';
import { defineOperation, OS_ADMIN } from '../../platform/operations.js';
import { ACTIONS, isActionInputProblem, parseAction, supportedActions, toAbstractAction, type ActionName, type DeviceActions } from './actions.js';
import { classifyCommand, deriveCapabilities } from './capabilities.js';
import { ActionNameSchema, ActionResultFields, CapabilityNameSchema, CommandView, SupportedActionSchema } from './capability-schemas.js';
import type { DeviceService } from './device-service.js';
import { deviceErrors } from './errors.js';
import { IdParam } from './schemas.js';

/** A device's commands read through the capability model, and abstract actions performed with its own commands. */
export function deviceActionOperations(devices: DeviceService, actions: DeviceActions) {
  const commandView = (device: ReturnType<DeviceService['registry']['get']>, spec: (typeof device.commands)[number]) => ({
    ...spec,
    ...classifyCommand(device, spec.name, devices.model(device).capabilities),
  });

  return {
    listDeviceCommands: defineOperation({
      name: 'devices.commands',
      summary: "A device's commands with their params, and the abstract actions it supports with the command each resolves to.",
      access: OS_ADMIN,
      input: Type.Object({ deviceId: IdParam }),
      output: Type.Object({
        deviceId: Type.String(),
        name: Type.String(),
        capabilities: Type.Array(CapabilityNameSchema),
        commands: Type.Array(CommandView),
        actions: Type.Array(SupportedActionSchema),
      }),
      async handler({ deviceId }) {
        const device = devices.registry.get(deviceId);
        const state = devices.state.get(deviceId).state;
        return {
          deviceId,
          name: device.name,
          capabilities: deriveCapabilities(device, { ...state }),
          commands: device.commands.map((c) => commandView(device, c)),
          actions: supportedActions(device, state),
        };
      },
    }),

    getDeviceCommand: defineOperation({
      name: 'devices.commands.get',
      summary: 'One command of a device with its params, capability and the abstract actions that use it (404 COMMAND_NOT_FOUND).',
      access: OS_ADMIN,
      input: Type.Object({ deviceId: IdParam, command: Type.String({ minLength: 1, maxLength: 200 }) }),
      output: Type.Object({
        deviceId: Type.String(),
        command: CommandView,
        actions: Type.Array(ActionNameSchema, { description: 'Abstract actions that resolve to this command now.' }),
      }),
      async handler({ deviceId, command }) {
        const device = devices.registry.get(deviceId);
        const spec = device.commands.find((c) => c.name === command);
        if (!spec) throw deviceErrors.COMMAND_NOT_FOUND({ device: device.name, command }, { details: { deviceId, command, commands: device.commands.map((c) => c.name) } });
        const state = devices.state.get(deviceId).state;
        return {
          deviceId,
          command: commandView(device, spec),
          actions: supportedActions(device, state)
            .filter((a) => a.command === spec.name)
            .map((a) => a.action),
        };
      },
    }),

    deviceAction: defineOperation({
      name: 'devices.action',
      summary: "Perform an abstract action (turn_on, set_brightness 40, volume_up…) with the device's own command.",
      description:
        '404 DEVICE_NOT_FOUND; 400 ACTION_VALUE_REQUIRED for set_brightness, set_volume, set_temperature and set_position without a value. A device that cannot do the action fails with 422 ACTION_NOT_SUPPORTED, and a driver failure with its own error (DRIVER_ERROR, DRIVER_TIMEOUT…); `details` then carries the whole result.',
      access: OS_ADMIN,
      input: Type.Object({
        deviceId: IdParam,
        action: ActionNameSchema,
        value: Type.Optional(Type.Number({ description: 'Brightness/volume/position/percentage 0–100, kelvin, temperature, or the volume step.' })),
        params: Type.Optional(
          Type.Record(Type.String(), Type.Unknown(), { description: 'For set_hs_color {hue, saturation}, set_hvac_mode {mode}, oscillate {oscillating}, set_direction {direction}.' }),
        ),
      }),
      output: Type.Object({ action: ActionNameSchema, ...ActionResultFields }),
      async handler({ deviceId, action, value, params }) {
        const device = devices.registry.get(deviceId);
        const name = action as ActionName;
        if (ACTIONS[name].value === 'required' && value === undefined) {
          throw deviceErrors.ACTION_VALUE_REQUIRED({ action: name }, { details: { field: 'value' } });
        }
        let abstract = toAbstractAction(name, ACTIONS[name].value === 'none' ? undefined : value);
        if (ACTIONS[name].value === 'params') {
          const parsed = parseAction(name, { params: params ?? {} }, devices.model(device).attributes);
          if (isActionInputProblem(parsed)) throw deviceErrors.INVALID_COMMAND_PARAMS({ command: name, problem: parsed.problem }, { details: { field: `params.${parsed.field}` } });
          abstract = parsed;
        }
        const result = { action: name, ...(await actions.perform(deviceId, abstract)) };
        if (!result.ok) throw failureOf(result.error, result);
        return result;
      },
    }),
  };
}
