import 'reflect-metadata';
import { OutboxConfigurationError } from '../../core/outbox.errors';
import { Idempotent, INBOX_REF } from './idempotent.decorator';

describe('@Idempotent(consumer)', () => {
  it.each([['orders\u0000projector'], [''], ['x'.repeat(256)]])('refuses the consumer name %j when the class is declared, naming it escaped', (consumer) => {
    expect(() => Idempotent(consumer)).toThrow(OutboxConfigurationError);
    expect(() => Idempotent(consumer)).toThrow(/^Inbox consumer name ".*" is refused: .*A consumer name .* is a non-blank string of at most 255 characters, without control characters/);
  });

  it('names a NUL by its escape, never as the raw character', () => {
    expect(() => Idempotent('orders\u0000projector')).toThrow('"orders\\u0000projector" is refused: it contains the control character U+0000 at index 6');
  });

  describe('with CloudEvents', () => {
    const runs: unknown[] = [];
    const inbox = {
      poison: {},
      processEnvelope: async (message: unknown, _consumer: string, work: () => unknown) => {
        runs.push(message);
        return { duplicate: false, result: await work() };
      },
    };
    class Handler {
      [INBOX_REF] = inbox;
      @Idempotent('billing.orders')
      async handle(payload: unknown, _context: unknown): Promise<unknown> {
        return payload;
      }
    }
    const kafkaContext = (headers: Record<string, Buffer>) => ({ getArgs: () => [], getArgByIndex: () => undefined, getMessage: () => ({ headers }) });

    beforeEach(() => runs.splice(0));

    it('reads a binary event from the ce_* headers of the context, even when the payload has an id and a type of its own', async () => {
      const payload = { id: 'payload-id', type: 'payload-type', total: 3 };
      const result = await new Handler().handle(payload, kafkaContext({ ce_id: Buffer.from('m-1'), ce_type: Buffer.from('OrderPlaced'), ce_eventversion: Buffer.from('2') }));
      expect(result).toBe(payload);
      expect(runs).toEqual([expect.objectContaining({ id: 'm-1', type: 'OrderPlaced', version: 2, payload })]);
    });

    it('hands a structured event (the payload) to the inbox as it came: its id is the message id', async () => {
      const structured = { specversion: '1.0', id: 'm-2', type: 'OrderPlaced', source: '/shop', data: {} };
      await new Handler().handle(structured, kafkaContext({ 'content-type': Buffer.from('application/cloudevents+json') }));
      expect(runs).toEqual([structured]);
    });
  });
});
