import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import request from 'supertest';
import { OutboxConfigurationError } from '@nest-outbox/outbox';
import { OutboxConsoleModule } from '@nest-outbox/outbox/console';
import { BearerTokenGuard, createConsoleHarness, OPERATOR_TOKEN, type ConsoleHarness } from '../support/console.harness';

const id = randomUUID();
const READS = ['', 'assets/console.js', 'api/summary', 'api/messages', `api/messages/${id}`, 'api/destinations/paused', 'api/asyncapi.json', 'api/asyncapi.yaml'];
const ACTIONS: Array<[string, object]> = [
  [`api/messages/${id}/requeue`, {}],
  [`api/messages/${id}/discard`, {}],
  [`api/messages/${id}/retry-now`, {}],
  ['api/bulk/requeue', { type: 'x', dryRun: true }],
  ['api/bulk/retry-now', { type: 'x', dryRun: true }],
  ['api/bulk/discard', { type: 'x', dryRun: true }],
  ['api/destinations/pause', { destination: 'orders', confirmUnknown: true }],
  ['api/destinations/resume', { destination: 'orders' }],
];

describe('Outbox console security', () => {
  describe('behind a guard', () => {
    let h: ConsoleHarness;
    beforeAll(async () => (h = await createConsoleHarness('sqlite')));
    afterAll(() => h.close());

    it.each(READS)('GET /outbox/%s: 401 without a credential, 403 with a wrong one', async (path) => {
      await request(h.app.getHttpServer()).get(`/outbox/${path}`).expect(401);
      await request(h.app.getHttpServer()).get(`/outbox/${path}`).set('Authorization', 'Bearer guess').expect(403);
    });

    it.each(ACTIONS)('POST /outbox/%s: 401 without a credential, 403 with a wrong one, nothing paused', async (path, body) => {
      await request(h.app.getHttpServer()).post(`/outbox/${path}`).send(body).expect(401);
      await request(h.app.getHttpServer()).post(`/outbox/${path}`).set('Authorization', 'Bearer guess').send(body).expect(403);
      expect(await h.dataSource.query('SELECT * FROM outbox_messages_paused')).toEqual([]);
    });

    it('takes actions only as JSON: a form post is refused with 415 and changes nothing', async () => {
      await request(h.app.getHttpServer())
        .post('/outbox/api/destinations/pause')
        .set('Authorization', `Bearer ${OPERATOR_TOKEN}`)
        .type('form')
        .send('destination=orders')
        .expect(415);
      await request(h.app.getHttpServer()).get('/outbox/api/destinations/pause').set('Authorization', `Bearer ${OPERATOR_TOKEN}`).expect(404);
      expect(await h.dataSource.query('SELECT * FROM outbox_messages_paused')).toEqual([]);
    });

    it('serves the page with its own base URL and a policy that allows nothing from elsewhere', async () => {
      const page = await request(h.app.getHttpServer()).get('/outbox').set('Authorization', `Bearer ${OPERATOR_TOKEN}`).expect(200);
      expect(page.text).toContain('<base href="/outbox/">');
      expect(page.headers['content-security-policy']).toContain("default-src 'none'");
      expect(page.text).not.toMatch(/https?:\/\//);
    });
  });

  describe('read-only', () => {
    let h: ConsoleHarness;
    beforeAll(async () => (h = await createConsoleHarness('sqlite', { guard: BearerTokenGuard, readOnly: true })));
    afterAll(() => h.close());

    it.each(ACTIONS)('POST /outbox/%s: 403 for an operator, nothing changed', async (path, body) => {
      const response = await request(h.app.getHttpServer()).post(`/outbox/${path}`).set('Authorization', `Bearer ${OPERATOR_TOKEN}`).send(body).expect(403);
      expect(response.body.message).toContain('read-only');
      expect(await h.dataSource.query('SELECT * FROM outbox_messages_paused')).toEqual([]);
    });

    it('still shows everything, and says it is read-only', async () => {
      const summary = await request(h.app.getHttpServer()).get('/outbox/api/summary').set('Authorization', `Bearer ${OPERATOR_TOKEN}`).expect(200);
      expect(summary.body.readOnly).toBe(true);
    });
  });

  describe('options', () => {
    it('refuses to mount without a guard unless noAuth is set', () => {
      expect(() => OutboxConsoleModule.forRoot({})).toThrow(OutboxConfigurationError);
      expect(() => OutboxConsoleModule.forRoot({})).toThrow(/"guard".*"noAuth: true"/s);
      expect(() => OutboxConsoleModule.forRoot({ guard: BearerTokenGuard, readOnly: 'yes' as never })).toThrow(/"readOnly"/);
      expect(() => OutboxConsoleModule.forRoot({ guard: BearerTokenGuard, maxPageSize: 0 })).toThrow(/"maxPageSize"/);
      expect(() => OutboxConsoleModule.forRoot({ guard: BearerTokenGuard, readonly: true } as never)).toThrow(/no option "readonly"/);
    });

    it('takes a guard instance as well as a class', async () => {
      const h = await createConsoleHarness('sqlite', { guard: new BearerTokenGuard(), path: 'ops/outbox' });
      try {
        await request(h.app.getHttpServer()).get('/ops/outbox/api/summary').expect(401);
        await request(h.app.getHttpServer()).get('/ops/outbox/api/summary').set('Authorization', `Bearer ${OPERATOR_TOKEN}`).expect(200);
      } finally {
        await h.close();
      }
    });

    it('warns at every start when served without authentication, and redacts payloads with the hook', async () => {
      const warnings: string[] = [];
      const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation((message: unknown) => void warnings.push(String(message)));
      const h = await createConsoleHarness('sqlite', { noAuth: true, redactPayload: (payload) => ({ ...(payload as object), email: '***' }) });
      try {
        expect(warnings.some((w) => w.includes('WITHOUT authentication'))).toBe(true);
        const [messageId] = await h.add([{ type: 'orders.order-placed', aggregateType: 'order', aggregateId: 'o-1', payload: { total: 5, email: 'a@b.c' } }]);
        const detail = await request(h.app.getHttpServer()).get(`/outbox/api/messages/${messageId}`).expect(200);
        expect(detail.body.payload).toEqual({ total: 5, email: '***' });
      } finally {
        warn.mockRestore();
        await h.close();
      }
    });

    it('withholds the payload, without a 500, when the redaction hook throws', async () => {
      const errors: string[] = [];
      const error = jest.spyOn(Logger.prototype, 'error').mockImplementation((message: unknown) => void errors.push(String(message)));
      const h = await createConsoleHarness('sqlite', {
        noAuth: true,
        redactPayload: (payload) => (payload as { customer: { email: string } }).customer.email.replace(/.+@/, '***@'),
      });
      try {
        const [messageId] = await h.add([{ type: 'orders.order-placed', aggregateType: 'order', aggregateId: 'o-1', payload: { email: 'a@b.c' } }]);
        const detail = await request(h.app.getHttpServer()).get(`/outbox/api/messages/${messageId}`).expect(200);
        expect(detail.body).toMatchObject({ id: messageId, payload: expect.stringContaining('withheld: the redactPayload hook failed') });
        expect(JSON.stringify(detail.body)).not.toContain('a@b.c');
        expect(errors).toEqual([expect.stringContaining(`redactPayload hook threw for message "${messageId}"`)]);
      } finally {
        error.mockRestore();
        await h.close();
      }
    });
  });
});
