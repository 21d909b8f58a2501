import { PrismaMariaDb } from '@prisma/adapter-mariadb';
import { describeDataLayer } from './data-layer.scenarios';
import { issueInvoice, type InvoicePrisma } from './examples/prisma.example';
import { generatePrismaClient } from './prisma/generate-client';

/** The generated client, typed by the little these tests use: it does not exist before `generatePrismaClient`. */
type GeneratedPrismaClient = InvoicePrisma & { $disconnect(): Promise<void> };

describeDataLayer(
  {
    name: 'Prisma',
    async open({ url }) {
      const { PrismaClient } = require(generatePrismaClient('mysql')) as { PrismaClient: new (options: { adapter: PrismaMariaDb }) => GeneratedPrismaClient };
      // The mariadb driver takes mariadb:// URLs; the server is the same.
      const prisma = new PrismaClient({ adapter: new PrismaMariaDb(`${url.replace(/^mysql:/, 'mariadb:')}?connectionLimit=4`) });
      return {
        issueInvoice: (outbox, id, correlationId) => issueInvoice(prisma, outbox, id, correlationId),
        inTransaction: (work) => prisma.$transaction((tx) => work(tx)),
        // The client itself: each of its raw queries would run in a transaction of its own.
        outsideTransaction: prisma,
        close: () => prisma.$disconnect(),
      };
    },
  },
  'mariadb',
);
