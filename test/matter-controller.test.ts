import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Endpoint, ServerNode, VendorId } from '@matter/main';
import { BridgedDeviceBasicInformationServer } from '@matter/main/behaviors/bridged-device-basic-information';
import { OnOffLightDevice } from '@matter/main/devices/on-off-light';
import { AggregatorEndpoint } from '@matter/main/endpoints/aggregator';
import { ManualPairingCodeCodec, Status, StatusResponseError } from '@matter/main/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  MatterStatusError,
  configureMatterForTests,
  freeUdpPort,
  isolatedEnvironment,
  startMatterTestController,
  type MatterTestController,
} from './support/matter-controller.js';

// The test peer against a small matter.js bridge made here (an aggregator with bridged on/off
// lights, as in matter.js's BridgedDevicesNode example), on loopback only.

const PASSCODE = 20202021;
const DISCRIMINATOR = 3840;

/** The light whose switching on fails: its OnOff server answers `on` with status Failure. */
class RefusingOnOffServer extends OnOffLightDevice.behaviors.onOff {
  override on(): never {
    throw new StatusResponseError('This light refuses to switch on', Status.Failure);
  }
}

const BridgedLight = OnOffLightDevice.with(BridgedDeviceBasicInformationServer);
const RefusingBridgedLight = OnOffLightDevice.with(RefusingOnOffServer, BridgedDeviceBasicInformationServer);

interface Bridge {
  server: ServerNode;
  aggregator: Endpoint<typeof AggregatorEndpoint>;
  light: Endpoint<typeof BridgedLight>;
}

let storageDir: string;
let port: number;
let bridge: Bridge | undefined;
let controller: MatterTestController | undefined;
let kitchen: number;

/** Starts the bridge on its storage and port: a fresh one the first time, the commissioned one after. */
async function startBridge(): Promise<Bridge> {
  const server = await ServerNode.create({
    id: 'test-bridge',
    environment: isolatedEnvironment('test-bridge', storageDir),
    network: { port, listeningAddressIpv4: '127.0.0.1', listeningAddressIpv6: '::1' },
    commissioning: { passcode: PASSCODE, discriminator: DISCRIMINATOR },
    productDescription: { name: 'Test bridge', deviceType: AggregatorEndpoint.deviceType },
    basicInformation: {
      vendorId: VendorId(0xfff1),
      vendorName: 'hub tests',
      productId: 0x8000,
      productName: 'Test bridge',
      nodeLabel: 'Test bridge',
      hardwareVersion: 1,
      softwareVersion: 1,
      serialNumber: 'bridge-0001',
      uniqueId: 'test-bridge-0001',
    },
  });
  const aggregator = new Endpoint(AggregatorEndpoint, { id: 'aggregator' });
  await server.add(aggregator);
  const light = new Endpoint(BridgedLight, {
    id: 'kitchen',
    bridgedDeviceBasicInformation: { nodeLabel: 'Kitchen light', serialNumber: 'kitchen-0001', reachable: true },
  });
  await aggregator.add(light);
  await server.start();
  return { server, aggregator, light };
}

function requireBridge(): Bridge {
  if (bridge === undefined) throw new Error('The bridge is not running');
  return bridge;
}

function requireController(): MatterTestController {
  if (controller === undefined) throw new Error('The controller is not running');
  return controller;
}

beforeAll(async () => {
  configureMatterForTests();
  storageDir = await mkdtemp(join(tmpdir(), 'matter-bridge-'));
  port = await freeUdpPort();
  bridge = await startBridge();
  kitchen = bridge.light.number;
  controller = await startMatterTestController({ fabricLabel: 'matter-controller.test' });
});

afterAll(async () => {
  // The bridge first: it then tells the controller it is going, and neither waits for the other.
  await bridge?.server.close();
  await controller?.close();
  if (storageDir !== undefined) await rm(storageDir, { recursive: true, force: true });
});

describe('Matter test controller against a matter.js bridge on loopback', () => {
  it('commissions the bridge at its known address with its manual pairing code', async () => {
    const { server } = requireBridge();
    const manualPairingCode = ManualPairingCodeCodec.encode({ discriminator: DISCRIMINATOR, passcode: PASSCODE });
    expect(manualPairingCode).toMatch(/^\d{11}$/);
    expect(manualPairingCode).toBe(server.state.commissioning.pairingCodes.manualPairingCode);
    expect(server.lifecycle.isCommissioned).toBe(false);

    const started = Date.now();
    const nodeId = await requireController().commission({ ip: '127.0.0.1', port, manualPairingCode, timeoutMs: 15_000 });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(typeof nodeId === 'bigint' || typeof nodeId === 'string').toBe(true);
    expect(server.lifecycle.isCommissioned).toBe(true);
    expect(server.state.operationalCredentials.fabrics.map((fabric) => fabric.label)).toEqual(['matter-controller.test']);
  });

  it('lists the bridged light with its device types, clusters and node label', async () => {
    const endpoints = await requireController().endpoints();
    expect(endpoints.find((e) => e.deviceTypes.some((t) => t.name === 'Aggregator'))).toMatchObject({
      number: requireBridge().aggregator.number,
      deviceTypes: [{ name: 'Aggregator', code: 0x0e }],
    });
    const light = endpoints.find((e) => e.number === kitchen);
    expect(light).toMatchObject({ label: 'Kitchen light' });
    expect(light?.deviceTypes).toEqual(
      expect.arrayContaining([
        { name: 'OnOffLight', code: 0x0100 },
        { name: 'BridgedNode', code: 0x0013 },
      ]),
    );
    expect(light?.clusters).toEqual(expect.arrayContaining(['bridgedDeviceBasicInformation', 'descriptor', 'identify', 'onOff']));
  });

  it('reads attributes from the bridge', async () => {
    const c = requireController();
    expect(await c.read(kitchen, 'onOff', 'onOff')).toBe(false);
    expect(await c.read(kitchen, 'bridgedDeviceBasicInformation', 'nodeLabel')).toBe('Kitchen light');
    expect(await c.read(0, 'basicInformation', 'vendorId')).toBe(0xfff1);
    await expect(c.read(kitchen, 'onOff', 'noSuchAttribute')).rejects.toThrow(/no attribute/);
    await expect(c.read(99, 'onOff', 'onOff')).rejects.toThrow(/no endpoint 99/);
  });

  it('toggles the light with a command: the bridge sees it and reports the change', async () => {
    const c = requireController();
    const { light } = requireBridge();
    const changed = new Promise<boolean>((resolve) => light.events.onOff.onOff$Changed.once((value) => resolve(value)));
    const reported = c.nextReport({ endpoint: kitchen, cluster: 'onOff', attribute: 'onOff' });
    await c.invoke(kitchen, 'onOff', 'toggle');
    expect(await changed).toBe(true);
    expect(light.state.onOff.onOff).toBe(true);
    expect((await reported).value).toBe(true);
    expect(c.reports.some((r) => r.endpoint === kitchen && r.attribute === 'onOff' && r.value === true)).toBe(true);
  });

  it('receives a change made on the bridge as a report within a second', async () => {
    const c = requireController();
    const { light } = requireBridge();
    const reported = c.nextReport({ endpoint: kitchen, cluster: 'onOff', attribute: 'onOff', value: (v) => v === false }, 1000);
    const changedAt = Date.now();
    await light.set({ onOff: { onOff: false } });
    const report = await reported;
    expect(report.at - changedAt).toBeLessThan(1000);
    expect(c.reports.at(-1)?.at).toBeGreaterThanOrEqual(report.at);
  });

  it('sees an endpoint added to the bridge after commissioning', async () => {
    const c = requireController();
    const { aggregator } = requireBridge();
    await aggregator.add(
      new Endpoint(RefusingBridgedLight, {
        id: 'hall',
        bridgedDeviceBasicInformation: { nodeLabel: 'Hall light', serialNumber: 'hall-0001', reachable: true },
      }),
    );
    await expect
      .poll(async () => (await c.endpoints()).find((e) => e.label === 'Hall light'), { timeout: 3000, interval: 50 })
      .toMatchObject({ deviceTypes: expect.arrayContaining([{ name: 'OnOffLight', code: 0x0100 }]) });
    expect((await c.endpoints()).filter((e) => e.label !== undefined).map((e) => e.label)).toEqual(['Kitchen light', 'Hall light']);
  });

  it('rejects a command the bridge fails, with the Matter status', async () => {
    const c = requireController();
    const hall = (await c.endpoints()).find((e) => e.label === 'Hall light');
    if (hall === undefined) throw new Error('no hall light');
    const failure = await c.invoke(hall.number, 'onOff', 'on').catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(MatterStatusError);
    expect(failure).toMatchObject({ status: Status.Failure, statusName: 'Failure' });
    expect((failure as Error).message).toBe(`onOff.on on endpoint ${hall.number} failed with status Failure (1)`);
    expect(await c.read(hall.number, 'onOff', 'onOff')).toBe(false);
    // Its other commands still work, and an unknown command is refused locally.
    await c.invoke(hall.number, 'onOff', 'off');
    await expect(c.invoke(hall.number, 'onOff', 'explode')).rejects.toThrow(/no command explode/);
  });

  it('reconnects to the restarted bridge without commissioning it again', async () => {
    const c = requireController();
    await requireBridge().server.close();
    bridge = undefined;
    bridge = await startBridge();
    const { server, light } = bridge;
    expect(server.lifecycle.isCommissioned).toBe(true);
    expect(light.number).toBe(kitchen); // endpoint numbers are kept in the bridge's storage

    await c.reconnect();
    expect(server.state.operationalCredentials.fabrics).toHaveLength(1);

    const reported = c.nextReport({ endpoint: kitchen, attribute: 'onOff', value: (v) => v === true }, 1000);
    await light.set({ onOff: { onOff: true } });
    await reported;
    await c.invoke(kitchen, 'onOff', 'off');
    expect(light.state.onOff.onOff).toBe(false);
    expect(await c.read(kitchen, 'onOff', 'onOff')).toBe(false);
  });
});
