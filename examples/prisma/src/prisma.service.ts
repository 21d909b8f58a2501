import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from './generated/prisma/client.js';
import { settings } from './settings.js';

/** The generated client on the `pg` driver adapter: no native query engine. */
@Injectable()
export class PrismaService extends PrismaClient implements OnApplicationShutdown {
  constructor() {
    super({ adapter: new PrismaPg({ connectionString: settings.databaseUrl }) });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.$disconnect();
  }
}
