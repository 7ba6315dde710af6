import { defineErrors } from '../../platform/errors.js';

export const mqttErrors = defineErrors({
  MQTT_OFF: ['unavailable', 'MQTT is off: set MQTT_URL (a broker URL, or "embedded") and restart the hub (docs/mqtt.md).'],
  MQTT_BROKER_NOT_EMBEDDED: ['conflict', 'The hub uses the broker at {broker}: its users are managed there, not in the hub (MQTT_URL=embedded runs the hub\'s own).'],
  MQTT_USER_EXISTS: ['conflict', 'The MQTT user {username} exists already.'],
  MQTT_USER_NOT_FOUND: ['not_found', 'No MQTT user {id}.'],
});
