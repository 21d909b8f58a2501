import { randomBytes } from 'node:crypto';
import type { INestApplicationContext } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { privateSchema, suffix, waitUntil, withClient } from './support/env';
import { OutboxPublisher, type OutboxModuleOptions } from './support/outbox';
import { startBenchApp } from './support/nest-apps';
import { type BenchContext, type Section, table } from './support/report';
import { distribution, fmt, fmtRatio } from './support/stats';

/** A payload well over the claim check's threshold below, and under Kafka's 1 MB: both variants can send it. */
const PAYLOAD_BYTES = 100 * 1024;
const THRESHOLD_BYTES = 16 * 1024;
const BLOCK = 20;

interface Variant {
  name: string;
  schema: string;
  outbox: Partial<OutboxModuleOptions>;
  latencies: number[];
  drainMs: number;
}

/**
 * P12: what the claim check costs. The same ~100 KiB event saved with `OutboxPublisher.add` in a
 * transaction of its own, inline (claim check off) and claim-checked (`claimCheck.thresholdBytes`
 * 16 KiB, the database store: one more INSERT of the payload, and a reference of ~300 bytes in the
 * row); saves alternate in blocks. Then a relaying instance starts on each schema and drains its
 * rows to the Kafka test broker: the inline rows carry the payload, the claim-checked ones only the
 * reference. Write-only instances for the saves, so that publishing does not share the saves' time.
 */
export async function p12ClaimCheck(context: BenchContext): Promise<Section> {
  const { services, sizes } = context;
  const events = sizes.name === 'full' ? 2_000 : 300;
  const topic = `bench-p12-${suffix()}`;
  const inline = await privateSchema(services.postgresUrl, 'bench_p12_inline');
  const claimed = await privateSchema(services.postgresUrl, 'bench_p12_claimed');
  const variants: Variant[] = [
    { name: 'inline (claim check off)', schema: inline.schema, outbox: {}, latencies: [], drainMs: 0 },
    { name: 'claim-checked (database store)', schema: claimed.schema, outbox: { claimCheck: { thresholdBytes: THRESHOLD_BYTES } }, latencies: [], drainMs: 0 },
  ];
  const payload = { blob: randomBytes((PAYLOAD_BYTES * 3) / 4).toString('base64') };
  const apps: INestApplicationContext[] = [];
  try {
    const writers = await Promise.all(
      variants.map((variant) =>
        startBenchApp({ postgresUrl: services.postgresUrl, schema: variant.schema, migrate: true, outbox: { relay: false, resolveTopic: () => topic, ...variant.outbox } }),
      ),
    );
    apps.push(...writers.map(({ app }) => app));
    const save = (app: INestApplicationContext, dataSource: DataSource, n: number) =>
      dataSource.transaction((manager) => app.get(OutboxPublisher).add(manager, { type: 'bench.document-scanned', aggregateType: 'document', aggregateId: `d-${n % 50}`, payload }));
    // Warm-up: connections and prepared statements, on rows the drain below counts too.
    for (const [index, { app, dataSource }] of writers.entries()) for (let i = 0; i < BLOCK; i++) await save(app, dataSource, i + index);
    for (let done = BLOCK; done < events; done += BLOCK) {
      for (const [index, { app, dataSource }] of writers.entries()) {
        for (let i = 0; i < BLOCK; i++) {
          const started = performance.now();
          await save(app, dataSource, done + i);
          variants[index].latencies.push(performance.now() - started);
        }
      }
    }
    context.log(`P12 saves: ${events} per variant`);
    await Promise.all(writers.map(({ app }) => app.close()));
    apps.length = 0;

    for (const variant of variants) {
      const started = performance.now();
      const { app } = await startBenchApp({
        postgresUrl: services.postgresUrl,
        schema: variant.schema,
        migrate: false,
        kafka: { brokers: services.kafkaBrokers, clientId: `bench-p12-${suffix()}` },
        outbox: { transport: 'KAFKA', resolveTopic: () => topic, pollIntervalMs: 100, ...variant.outbox },
      });
      apps.push(app);
      await waitUntil(
        `P12 ${variant.name}: ${events} rows published`,
        () => withClient(services.postgresUrl, async (client) => Number((await client.query(`SELECT count(*) AS n FROM ${variant.schema}.outbox_messages WHERE status = 'published'`)).rows[0].n) >= events),
        120_000,
        25,
      );
      variant.drainMs = performance.now() - started;
      await app.close();
      apps.length = 0;
    }
  } finally {
    await Promise.all(apps.map((app) => app.close().catch(() => undefined)));
    await inline.drop();
    await claimed.drop();
  }

  const [plain, checked] = variants;
  const row = (variant: Variant) => {
    const latency = distribution(variant.latencies);
    return [variant.name, fmt(latency.p50, 2), fmt(latency.p99, 2), fmt(variant.drainMs / events, 2), fmt((events * 1000) / variant.drainMs, 0)];
  };
  const saveRatio = distribution(checked.latencies).p50 / distribution(plain.latencies).p50;
  const drainRatio = checked.drainMs / plain.drainMs;
  return {
    id: 'P12',
    title: `P12 — the claim check: a ${PAYLOAD_BYTES / 1024} KiB event inline and claim-checked (${events} events each)`,
    body: [
      ...table(['variant', 'save p50 ms', 'save p99 ms', 'drain ms per event (incl. start)', 'drained events/s'], variants.map(row)),
      '',
      `Saves: one \`OutboxPublisher.add\` per transaction, sequential, the variants alternating in blocks of ${BLOCK}; the claim-checked save also INSERTs the payload into \`outbox_messages_payloads\` (threshold ${THRESHOLD_BYTES / 1024} KiB). ` +
        'Drain: a relaying instance started on the saved rows, timed from its start (Kafka connection included) until every row is published; ' +
        'the claim-checked messages carry a ~300-byte reference instead of the payload. Consumers fetching the payloads back are not measured here.',
    ],
    summary: [
      { bench: 'P12', figure: `claim-checked save p50 vs inline (${PAYLOAD_BYTES / 1024} KiB)`, value: fmtRatio(saveRatio) },
      { bench: 'P12', figure: 'claim-checked drain time vs inline', value: fmtRatio(drainRatio) },
    ],
  };
}
