import { Transport, type MqttContext } from '@nestjs/microservices';
import { describeTransportContract, serviceOutage, stringHeaders } from './transport-contract';

interface MqttPacket {
  topic: string;
  qos: number;
  retain: boolean;
  properties?: { userProperties?: Record<string, string | string[]> };
}

describeTransportContract({
  name: 'mqtt',
  services: ['mqtt'],
  topic: (suffix) => `outbox-contract/${suffix}/parcels`,
  producer: (run) => ({
    name: 'PARCEL_EVENTS',
    transport: Transport.MQTT,
    // MQTT 5: user properties exist only from version 5 on (3.1.1 would drop them silently).
    options: { url: run.url('mqtt'), protocolVersion: 5, clientId: `outbox-producer-${run.suffix}`, reconnectPeriod: 250 },
  }),
  consumer: (run) => ({
    transport: Transport.MQTT,
    options: {
      url: run.url('mqtt'),
      protocolVersion: 5,
      // A persistent session: Mosquitto keeps the subscription and queues QoS 1 messages for it while the
      // consumer is away, also across a broker restart (persistence is on in scripts/services.sh).
      clientId: `outbox-consumer-${run.suffix}`,
      clean: false,
      properties: { sessionExpiryInterval: 120 },
      subscribeOptions: { qos: 1 },
      reconnectPeriod: 250,
    },
  }),
  metadata: {
    read: (context) => {
      const packet = (context as MqttContext).getPacket() as unknown as MqttPacket;
      const headers = stringHeaders(packet.properties?.userProperties);
      return { key: headers['outbox-key'], headers, properties: { topic: packet.topic, qos: packet.qos, retain: packet.retain } };
    },
    headers: 'envelope',
    expectedProperties: (_envelope, run) => ({ topic: run.topic, qos: 1, retain: false }),
  },
  acknowledgement: 'broker',
  outage: {
    broker: serviceOutage('mqtt'),
    lastError: /Connection lost|ECONNREFUSED|no acknowledgement within/,
    delivery: 'all',
  },
});
