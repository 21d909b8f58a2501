import { PrismaPg } from '@prisma/adapter-pg';
import { describeDataLayer } from './data-layer.scenarios';
import { issueInvoice, type InvoicePrisma } from './examples/prisma.example';
import { generatePrismaClient } from './prisma/generate-client';

/** The generated client, typed by the little these tests use: it does not exist before `generatePrismaClient`. */
type GeneratedPrismaClient = InvoicePrisma & { $disconnect(): Promise<void> };

describeDataLayer({
  name: 'Prisma',
  async open({ url, schema }) {
    const { PrismaClient } = require(generatePrismaClient()) as { PrismaClient: new (options: { adapter: PrismaPg }) => GeneratedPrismaClient };
    const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: url, options: `-c search_path=${schema}`, max: 4 }, { schema }) });
    return {
      issueInvoice: (outbox, id, correlationId) => issueInvoice(prisma, outbox, id, correlationId),
      inTransaction: (work) => prisma.$transaction((tx) => work(tx)),
      // The client itself: each of its raw queries would run in a transaction of its own.
      outsideTransaction: prisma,
      close: () => prisma.$disconnect(),
    };
  },
});
