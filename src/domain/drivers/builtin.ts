import type { DriverLink } from './driver-link.js';
import type { ActionFailure, DriverManager, DriverManagerLogger } from './driver-manager.js';
import type { DriverEvent, ServerToDriverMessage } from './messages.js';

/**
 * What the hub gives an integration built into it (Roku, Android TV, bridge endpoints): the
 * driver protocol's events, held to the same schemas as any driver's, plus the two things the
 * wire protocol cannot say and an integration that talks to the device itself knows.
 */
export interface BuiltInDriverContext {
  /** A driver event (DEVICE_DISCOVERED, STATE_UPDATE, ACTION_RESULT, …), applied in order. */
  emit(event: DriverEvent): void;
  /** The device answers again, or stopped answering: its `online` in the state authority. */
  setOnline(driverDeviceId: string, online: boolean): void;
  /** Fails an action: the device could not be reached (502), did not answer in time (504), or the command was refused (422). */
  fail(actionId: string, failure: ActionFailure, reason: string): void;
}

/**
 * An integration that runs in the hub's process and speaks a device's network protocol itself.
 * It receives ACTIONs like any driver and answers through its context; everything it does with
 * the network is bounded in time, so a dead or slow device degrades that device only.
 */
export interface BuiltInDriver {
  readonly driverKey: string;
  /** Called once the link is in service. */
  connect(context: BuiltInDriverContext): void;
  /** An ACTION for one of its devices (or a status notice). Must not throw. */
  receive(message: ServerToDriverMessage): void;
  /** The link is gone (hub stopping): stop timers and sockets. */
  disconnect(): void;
}

/**
 * Puts a built-in integration in service as a driver link (transport `builtin`), so that its
 * devices, their commands and their state take the same path as every driver's. Returns the
 * function that takes it out of service.
 */
export function attachBuiltInDriver(manager: DriverManager, driver: BuiltInDriver, log: DriverManagerLogger): () => void {
  let open = true;
  const link: DriverLink = {
    driverKey: driver.driverKey,
    instanceId: `builtin:${driver.driverKey}`,
    transport: 'builtin',
    send(message) {
      if (!open || message.type === 'DRIVER_STATUS') return;
      // Asynchronous like every other transport: the caller's promise is set up before the answer.
      queueMicrotask(() => {
        try {
          driver.receive(message);
        } catch (err) {
          log.error({ err, driverKey: driver.driverKey }, 'built-in driver threw on a message');
        }
      });
    },
    close() {
      open = false;
    },
  };
  manager.attach(link);
  // setOnline waits for the events emitted before it, so "offline" cannot overtake the discovery.
  let applied: Promise<unknown> = Promise.resolve();
  driver.connect({
    emit(event) {
      if (!open) return;
      applied = manager.receive(link, event).then((receipt) => {
        if (!receipt.ok) log.error({ driverKey: driver.driverKey, code: receipt.code, message: receipt.message }, 'built-in driver sent an invalid message');
      });
    },
    setOnline(driverDeviceId, online) {
      if (open) applied = applied.then(() => manager.reportOnline(link, driverDeviceId, online));
    },
    fail(actionId, failure, reason) {
      if (open) manager.failAction(link, actionId, failure, reason);
    },
  });
  return () => {
    if (!open) return;
    manager.detach(link, 'integration stopped');
    open = false;
    driver.disconnect();
  };
}
