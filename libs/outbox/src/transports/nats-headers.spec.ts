import type { OutgoingMessage } from '../core/outbox-message';
import { natsRecordFor } from './nats-headers';
import { natsNeedsPackages } from './nats.messages';

describe('natsRecordFor', () => {
  it('carries the message headers and its key on the NATS client library\'s own headers', () => {
    const message = { destination: 'orders', key: 'order-1', headers: { 'outbox-type': 'OrderPlaced' }, envelope: {}, body: { id: 1 } } as unknown as OutgoingMessage;
    const record = natsRecordFor(message);
    const headers = record.headers as unknown as { get(name: string): string };
    expect(headers.get('outbox-type')).toBe('OrderPlaced');
    expect(headers.get('outbox-key')).toBe('order-1');
    expect(record.data).toEqual({ id: 1 });
  });

  it('without the NATS client installed, fails naming the package to install', () => {
    jest.doMock('@nats-io/transport-node', () => {
      throw Object.assign(new Error("Cannot find module '@nats-io/transport-node'"), { code: 'MODULE_NOT_FOUND' });
    });
    try {
      jest.isolateModules(() => {
        const isolated = require('./nats-headers') as typeof import('./nats-headers');
        const message = { destination: 'orders', key: 'order-1', headers: {}, envelope: {} } as unknown as OutgoingMessage;
        expect(() => isolated.natsRecordFor(message)).toThrow(/A message sent over NATS \(its headers\) needs "@nats-io\/transport-node".*npm install @nats-io\/transport-node/);
      });
    } finally {
      jest.dontMock('@nats-io/transport-node');
    }
  });

  it('names the missing NATS packages and how to install them', () => {
    expect(natsNeedsPackages('JetStreamTransport', ['@nats-io/transport-node', '@nats-io/jetstream'])).toBe(
      'JetStreamTransport needs "@nats-io/transport-node" and "@nats-io/jetstream", which are not installed. Run "npm install @nats-io/transport-node @nats-io/jetstream".',
    );
  });
});
