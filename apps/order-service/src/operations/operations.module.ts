import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { MetricsRegistryModule } from './metrics-registry.module';
import { OperationsController } from './operations.controller';

/** `/metrics` and `/health`. */
@Module({
  imports: [TerminusModule, MetricsRegistryModule],
  controllers: [OperationsController],
})
export class OperationsModule {}
